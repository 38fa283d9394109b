//! A device as the API sees it: the handle around a device-model device.
//!
//! Root devices are the platform's (static: retain and release change nothing). Sub-devices
//! (clCreateSubDevices) are reference-counted objects created at run time; each holds its
//! parent, and contexts, queues and programs hold their devices, so releasing a sub-device
//! while they live is safe.

use crate::cl::*;
use crate::handle::{ClObject, Header, ObjectKind};
use softcl_device_model::{AffinityDomain, DeviceInfo, DeviceKind, Partition, PartitionError};
use std::sync::Arc;

#[repr(C)]
pub struct Device {
    header: Header,
    pub model: Arc<dyn softcl_device_model::Device>,
    /// The device this one was partitioned from (None: a root device).
    pub parent: Option<Arc<Device>>,
    /// CL_DEVICE_PARTITION_TYPE: the properties the sub-device was created with (empty for
    /// a root device; NEXT_PARTITIONABLE replaced by the domain used).
    pub partition_type: Vec<cl_device_partition_property>,
}

impl ClObject for Device {
    const KIND: ObjectKind = ObjectKind::Device;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl Device {
    pub fn new(model: Arc<dyn softcl_device_model::Device>) -> Self {
        Self { header: Header::new(ObjectKind::Device), model, parent: None, partition_type: Vec::new() }
    }
    /// Whether this is a sub-device (reference counted; root devices are not).
    pub fn is_sub_device(&self) -> bool {
        self.parent.is_some()
    }
    /// Whether `ancestor` is this device's parent, or its parent's, and so on.
    pub fn descends_from(&self, ancestor: &Device) -> bool {
        let mut p = self.parent.as_deref();
        while let Some(d) = p {
            if std::ptr::eq(d, ancestor) {
                return true;
            }
            p = d.parent.as_deref();
        }
        false
    }
    /// The root device this one descends from (itself for a root device).
    pub fn root(self: &Arc<Self>) -> Arc<Device> {
        let mut d = Arc::clone(self);
        while let Some(p) = d.parent.clone() {
            d = p;
        }
        d
    }
    /// clCreateSubDevices' partition: parses `properties` (a 0-terminated list) and creates
    /// the sub-devices.
    pub fn create_sub_devices(
        self: &Arc<Self>,
        properties: &[cl_device_partition_property],
    ) -> Result<Vec<Arc<Device>>, cl_int> {
        let (scheme, mut recorded) = parse_partition(properties)?;
        let Some(support) = self.model.fission() else {
            // "CL_INVALID_VALUE if ... values specified in properties are valid but not
            // supported by the device."
            return Err(CL_INVALID_VALUE);
        };
        if let Partition::ByAffinity(d) = scheme {
            if !support.domains.contains(&d) {
                return Err(CL_INVALID_VALUE);
            }
        }
        let (models, domain) = self.model.create_sub_devices(&scheme).map_err(|e| match e {
            PartitionError::InvalidValue => CL_INVALID_VALUE,
            PartitionError::Failed => CL_DEVICE_PARTITION_FAILED,
            PartitionError::InvalidCount => CL_INVALID_DEVICE_PARTITION_COUNT,
        })?;
        if let (Some(d), Partition::ByAffinity(_)) = (domain, &scheme) {
            recorded[1] = affinity_bits(d) as cl_device_partition_property;
        }
        Ok(models
            .into_iter()
            .map(|model| {
                Arc::new(Device {
                    header: Header::new(ObjectKind::Device),
                    model,
                    parent: Some(Arc::clone(self)),
                    partition_type: recorded.clone(),
                })
            })
            .collect())
    }
    pub fn info(&self) -> &DeviceInfo {
        self.model.info()
    }
    /// CL_DEVICE_TYPE of this device (the first device is also CL_DEVICE_TYPE_DEFAULT).
    pub fn cl_type(&self) -> u64 {
        match self.info().kind {
            DeviceKind::Cpu => CL_DEVICE_TYPE_CPU as u64,
            DeviceKind::Gpu => CL_DEVICE_TYPE_GPU as u64,
        }
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({})", self.info().name)
    }
}

/// CL_DEVICE_AFFINITY_DOMAIN_* of a domain.
pub fn affinity_bits(d: AffinityDomain) -> cl_device_affinity_domain {
    (match d {
        AffinityDomain::Numa => CL_DEVICE_AFFINITY_DOMAIN_NUMA,
        AffinityDomain::Cache(4) => CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE,
        AffinityDomain::Cache(3) => CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE,
        AffinityDomain::Cache(2) => CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE,
        AffinityDomain::Cache(_) => CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE,
        AffinityDomain::NextPartitionable => CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE,
    }) as cl_device_affinity_domain
}

fn affinity_of_bits(bits: cl_device_partition_property) -> Option<AffinityDomain> {
    [
        AffinityDomain::Numa,
        AffinityDomain::Cache(4),
        AffinityDomain::Cache(3),
        AffinityDomain::Cache(2),
        AffinityDomain::Cache(1),
        AffinityDomain::NextPartitionable,
    ]
    .into_iter()
    .find(|&d| affinity_bits(d) as cl_device_partition_property == bits)
}

/// A partition property list -> the scheme and the list as CL_DEVICE_PARTITION_TYPE reports
/// it (terminator included). "CL_INVALID_VALUE if values specified in properties are not
/// valid"; negative counts are CL_INVALID_DEVICE_PARTITION_COUNT.
pub fn parse_partition(
    props: &[cl_device_partition_property],
) -> Result<(Partition, Vec<cl_device_partition_property>), cl_int> {
    let name = *props.first().ok_or(CL_INVALID_VALUE)?;
    let value = |i: usize| props.get(i).copied().ok_or(CL_INVALID_VALUE);
    let (scheme, used) = match name as u32 {
        CL_DEVICE_PARTITION_EQUALLY => {
            let n = value(1)?;
            if n < 0 {
                return Err(CL_INVALID_VALUE);
            }
            (Partition::Equally(n as usize), 2)
        }
        CL_DEVICE_PARTITION_BY_COUNTS => {
            let mut counts = Vec::new();
            let mut i = 1;
            loop {
                let c = value(i)?;
                i += 1;
                if c == CL_DEVICE_PARTITION_BY_COUNTS_LIST_END as cl_device_partition_property {
                    break;
                }
                if c < 0 {
                    return Err(CL_INVALID_DEVICE_PARTITION_COUNT);
                }
                counts.push(c as usize);
            }
            (Partition::ByCounts(counts), i)
        }
        CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN => {
            let d = affinity_of_bits(value(1)?).ok_or(CL_INVALID_VALUE)?;
            (Partition::ByAffinity(d), 2)
        }
        _ => return Err(CL_INVALID_VALUE),
    };
    // One scheme per list: the next property must end it.
    if value(used)? != 0 {
        return Err(CL_INVALID_VALUE);
    }
    Ok((scheme, props[..=used].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &[u32]) -> Vec<cl_device_partition_property> {
        v.iter().map(|&x| x as cl_device_partition_property).collect()
    }

    #[test]
    fn partition_lists() {
        let (s, rec) = parse_partition(&p(&[CL_DEVICE_PARTITION_EQUALLY, 2, 0])).unwrap();
        assert_eq!((s, rec), (Partition::Equally(2), p(&[CL_DEVICE_PARTITION_EQUALLY, 2, 0])));
        let (s, rec) = parse_partition(&p(&[CL_DEVICE_PARTITION_BY_COUNTS, 1, 3, 0, 0])).unwrap();
        assert_eq!((s, rec.len()), (Partition::ByCounts(vec![1, 3]), 5));
        let (s, _) =
            parse_partition(&p(&[CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE, 0]))
                .unwrap();
        assert_eq!(s, Partition::ByAffinity(AffinityDomain::Cache(2)));
        assert_eq!(parse_partition(&[]).unwrap_err(), CL_INVALID_VALUE);
        assert_eq!(parse_partition(&p(&[0x4242, 1, 0])).unwrap_err(), CL_INVALID_VALUE);
        // Two schemes in one list.
        let two = p(&[CL_DEVICE_PARTITION_EQUALLY, 1, CL_DEVICE_PARTITION_EQUALLY, 1, 0]);
        assert_eq!(parse_partition(&two).unwrap_err(), CL_INVALID_VALUE);
        let bad_domain = p(&[CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 0x3, 0]);
        assert_eq!(parse_partition(&bad_domain).unwrap_err(), CL_INVALID_VALUE);
        let negative = vec![CL_DEVICE_PARTITION_BY_COUNTS as cl_device_partition_property, -1, 0, 0];
        assert_eq!(parse_partition(&negative).unwrap_err(), CL_INVALID_DEVICE_PARTITION_COUNT);
    }

    #[test]
    fn sub_devices_of_the_cpu_device() {
        let cpu = crate::platform::platform().devices[0].clone();
        let n = cpu.info().max_compute_units as isize;
        let subs = cpu.create_sub_devices(&p(&[CL_DEVICE_PARTITION_EQUALLY, 1, 0])).unwrap();
        assert_eq!(subs.len() as isize, n);
        for s in &subs {
            assert_eq!(s.info().max_compute_units, 1);
            assert!(Arc::ptr_eq(s.parent.as_ref().unwrap(), &cpu));
            assert!(Arc::ptr_eq(&s.root(), &cpu));
        }
        // Too many units per sub-device; the Gen device cannot be partitioned.
        let too_many = vec![CL_DEVICE_PARTITION_EQUALLY as isize, n + 1, 0];
        assert_eq!(cpu.create_sub_devices(&too_many).unwrap_err(), CL_INVALID_DEVICE_PARTITION_COUNT);
        let gen = crate::platform::platform().devices[1].clone();
        assert_eq!(gen.create_sub_devices(&p(&[CL_DEVICE_PARTITION_EQUALLY, 1, 0])).unwrap_err(), CL_INVALID_VALUE);
    }
}

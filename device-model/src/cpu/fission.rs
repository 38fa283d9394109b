//! Device fission of the CPU device: the host's topology (NUMA nodes and cache levels, from
//! /sys) and the partition schemes of clCreateSubDevices as sets of CPU numbers.
//!
//! A compute unit of the CPU device is one hardware thread (one logical CPU the process may
//! run on). A sub-device owns a set of CPUs; its executor's workers are pinned to them
//! (`exec.rs`), so sibling sub-devices run on disjoint cores.
//!
//! Choices the specification leaves open:
//! - CL_DEVICE_PARTITION_AFFINITY_DOMAIN lists the domains that split the device into more
//!   than one sub-device. A domain the host does not describe, or one that would give one
//!   sub-device holding every compute unit (e.g. L3 on a host with one L3), is not listed,
//!   and asking the runtime for it is CL_INVALID_VALUE (valid but not supported). The CTS's
//!   buffers (buffer_migrate, image_migrate) partition by every listed domain and fail on
//!   CL_DEVICE_PARTITION_FAILED. `partition` itself still answers a described domain that
//!   does not split with CL_DEVICE_PARTITION_FAILED.
//! - NEXT_PARTITIONABLE takes the first of NUMA, L4, L3, L2, L1 that splits the device into
//!   more than one sub-device; CL_DEVICE_PARTITION_TYPE of its sub-devices names that domain.
//! - EQUALLY with more compute units per sub-device than the device has is
//!   CL_INVALID_DEVICE_PARTITION_COUNT ("the total number of compute units requested
//!   exceeds"); with exactly as many, or BY_COUNTS of one entry holding every unit, the one
//!   sub-device would be the device itself: CL_DEVICE_PARTITION_FAILED (the CTS's api
//!   negative_create_sub_devices asks both); 0 is CL_INVALID_VALUE.

use std::collections::BTreeSet;

/// An affinity domain of CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AffinityDomain {
    Numa,
    /// A cache level, 1 to 4.
    Cache(u8),
    NextPartitionable,
}

/// A partition scheme with its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Partition {
    Equally(usize),
    ByCounts(Vec<usize>),
    ByAffinity(AffinityDomain),
}

/// Why a partition cannot be made (each maps to one OpenCL error code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionError {
    /// CL_INVALID_VALUE: a value not valid or not supported by the device.
    InvalidValue,
    /// CL_DEVICE_PARTITION_FAILED: supported, but this device cannot be partitioned so.
    Failed,
    /// CL_INVALID_DEVICE_PARTITION_COUNT: BY_COUNTS asks for too many sub-devices or units.
    InvalidCount,
}

/// What a partitionable device reports: CL_DEVICE_PARTITION_MAX_SUB_DEVICES and the affinity
/// domains of CL_DEVICE_PARTITION_AFFINITY_DOMAIN (schemes: EQUALLY, BY_COUNTS, and
/// BY_AFFINITY_DOMAIN when `domains` is not empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FissionSupport {
    pub max_sub_devices: usize,
    pub domains: Vec<AffinityDomain>,
}

/// Sub-devices' CPU sets, and the affinity domain actually used (NEXT_PARTITIONABLE resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts {
    pub cpus: Vec<Vec<usize>>,
    pub domain: Option<AffinityDomain>,
}

/// Which CPUs share each domain: per domain, a list of CPU groups.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    /// NUMA nodes' CPUs (empty: no NUMA description).
    pub numa: Vec<Vec<usize>>,
    /// Index `level - 1`: the CPU groups sharing one cache of that level (data or unified).
    pub caches: [Vec<Vec<usize>>; 4],
}

/// Parses a Linux CPU list ("0-3,8,10-11").
pub fn parse_cpu_list(text: &str) -> Vec<usize> {
    let mut out = BTreeSet::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    out.extend(a..=b.min(a + 65535));
                }
            }
            None => {
                if let Ok(c) = part.trim().parse() {
                    out.insert(c);
                }
            }
        }
    }
    out.into_iter().collect()
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

impl Topology {
    /// The host's topology from /sys/devices/system (empty where /sys says nothing).
    pub fn host(cpus: &[usize]) -> Self {
        let mut topo = Topology::default();
        let mut numa = BTreeSet::new();
        for node in 0..1024 {
            let Some(list) = read(&format!("/sys/devices/system/node/node{node}/cpulist")) else {
                if node > 0 && std::fs::metadata(format!("/sys/devices/system/node/node{node}")).is_err() {
                    break;
                }
                continue;
            };
            let set = parse_cpu_list(&list);
            if !set.is_empty() {
                numa.insert(set);
            }
        }
        topo.numa = numa.into_iter().collect();
        let mut caches: [BTreeSet<Vec<usize>>; 4] = Default::default();
        for &cpu in cpus {
            for index in 0..16 {
                let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache/index{index}");
                let Some(level) = read(&format!("{dir}/level")) else { break };
                let kind = read(&format!("{dir}/type")).unwrap_or_default();
                if kind.trim() == "Instruction" {
                    continue;
                }
                let Ok(level) = level.trim().parse::<usize>() else { continue };
                let Some(shared) = read(&format!("{dir}/shared_cpu_list")) else { continue };
                if (1..=4).contains(&level) {
                    caches[level - 1].insert(parse_cpu_list(&shared));
                }
            }
        }
        topo.caches = caches.map(|s| s.into_iter().collect());
        topo
    }

    fn groups(&self, domain: AffinityDomain) -> &[Vec<usize>] {
        match domain {
            AffinityDomain::Numa => &self.numa,
            AffinityDomain::Cache(l) if (1..=4).contains(&l) => &self.caches[usize::from(l) - 1],
            _ => &[],
        }
    }

    /// Whether the host describes `domain` for every CPU of `cpus`.
    pub fn has(&self, domain: AffinityDomain, cpus: &[usize]) -> bool {
        match domain {
            AffinityDomain::NextPartitionable => NEXT_PARTITIONABLE_ORDER.iter().any(|&d| self.has(d, cpus)),
            d => {
                let groups = self.groups(d);
                !cpus.is_empty() && cpus.iter().all(|c| groups.iter().any(|g| g.contains(c)))
            }
        }
    }

    /// Whether partitioning `cpus` by `domain` gives more than one sub-device (the domains a
    /// device lists in CL_DEVICE_PARTITION_AFFINITY_DOMAIN).
    pub fn splits(&self, domain: AffinityDomain, cpus: &[usize]) -> bool {
        match domain {
            AffinityDomain::NextPartitionable => NEXT_PARTITIONABLE_ORDER.iter().any(|&d| self.splits(d, cpus)),
            d => self.has(d, cpus) && self.split(d, cpus).len() > 1,
        }
    }

    /// `cpus` split by `domain`: one set per group that holds some of them.
    fn split(&self, domain: AffinityDomain, cpus: &[usize]) -> Vec<Vec<usize>> {
        let mut out: Vec<Vec<usize>> = Vec::new();
        for g in self.groups(domain) {
            let part: Vec<usize> = cpus.iter().copied().filter(|c| g.contains(c)).collect();
            if !part.is_empty() && !out.contains(&part) {
                out.push(part);
            }
        }
        out
    }
}

/// The domains CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE tries, from the largest.
const NEXT_PARTITIONABLE_ORDER: [AffinityDomain; 5] = [
    AffinityDomain::Numa,
    AffinityDomain::Cache(4),
    AffinityDomain::Cache(3),
    AffinityDomain::Cache(2),
    AffinityDomain::Cache(1),
];

/// Partitions the compute units `cpus` of a device (at most `max_sub_devices` sub-devices).
pub fn partition(
    cpus: &[usize],
    topology: &Topology,
    scheme: &Partition,
    max_sub_devices: usize,
) -> Result<Parts, PartitionError> {
    let units = cpus.len();
    match scheme {
        Partition::Equally(0) => Err(PartitionError::InvalidValue),
        Partition::Equally(n) => {
            // "CL_INVALID_DEVICE_PARTITION_COUNT if ... the total number of compute units
            // requested exceeds CL_DEVICE_MAX_COMPUTE_UNITS for in_device."
            if *n > units {
                return Err(PartitionError::InvalidCount);
            }
            // One sub-device holding every unit is not a further partition: "in_device could
            // not be further partitioned" (the CTS's api negative_create_sub_devices asks both
            // of these), as for affinity domains that do not split.
            let count = (units / n).min(max_sub_devices);
            if count == 0 || *n == units {
                return Err(PartitionError::Failed);
            }
            Ok(Parts { cpus: (0..count).map(|i| cpus[i * n..(i + 1) * n].to_vec()).collect(), domain: None })
        }
        Partition::ByCounts(counts) => {
            let total: usize = counts.iter().try_fold(0usize, |a, &c| a.checked_add(c)).unwrap_or(usize::MAX);
            if counts.is_empty()
                || counts.len() > max_sub_devices
                || counts.len() > units
                || total > units
                || counts.contains(&0)
            {
                return Err(PartitionError::InvalidCount);
            }
            if counts.len() == 1 && total == units {
                return Err(PartitionError::Failed);
            }
            let mut start = 0;
            let parts = counts
                .iter()
                .map(|&c| {
                    let p = cpus[start..start + c].to_vec();
                    start += c;
                    p
                })
                .collect();
            Ok(Parts { cpus: parts, domain: None })
        }
        Partition::ByAffinity(AffinityDomain::NextPartitionable) => {
            if !topology.has(AffinityDomain::NextPartitionable, cpus) {
                return Err(PartitionError::InvalidValue);
            }
            for d in NEXT_PARTITIONABLE_ORDER {
                if topology.has(d, cpus) {
                    let parts = topology.split(d, cpus);
                    if parts.len() > 1 && parts.len() <= max_sub_devices {
                        return Ok(Parts { cpus: parts, domain: Some(d) });
                    }
                }
            }
            Err(PartitionError::Failed)
        }
        Partition::ByAffinity(d) => {
            if !topology.has(*d, cpus) {
                return Err(PartitionError::InvalidValue);
            }
            let parts = topology.split(*d, cpus);
            if parts.len() <= 1 || parts.len() > max_sub_devices {
                return Err(PartitionError::Failed);
            }
            Ok(Parts { cpus: parts, domain: Some(*d) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two NUMA nodes of 4 CPUs, an L3 per node, an L2 per pair, an L1 per CPU.
    fn two_sockets() -> Topology {
        Topology {
            numa: vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]],
            caches: [
                (0..8).map(|c| vec![c]).collect(),
                vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]],
                vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]],
                vec![],
            ],
        }
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
    }

    #[test]
    fn equally() {
        let cpus: Vec<usize> = (0..8).collect();
        let t = two_sockets();
        let p = partition(&cpus, &t, &Partition::Equally(3), 8).unwrap();
        assert_eq!(p.cpus, vec![vec![0, 1, 2], vec![3, 4, 5]]);
        assert_eq!(partition(&cpus, &t, &Partition::Equally(0), 8), Err(PartitionError::InvalidValue));
        assert_eq!(partition(&cpus, &t, &Partition::Equally(9), 8), Err(PartitionError::InvalidCount));
        assert_eq!(partition(&cpus, &t, &Partition::Equally(1), 8).unwrap().cpus.len(), 8);
        // All units in one sub-device, or a one-unit device: no further partition.
        assert_eq!(partition(&cpus, &t, &Partition::Equally(8), 8), Err(PartitionError::Failed));
        assert_eq!(partition(&[3], &t, &Partition::Equally(1), 8), Err(PartitionError::Failed));
        assert_eq!(partition(&cpus, &t, &Partition::Equally(7), 8).unwrap().cpus, vec![(0..7).collect::<Vec<_>>()]);
    }

    #[test]
    fn by_counts() {
        let cpus: Vec<usize> = (0..8).collect();
        let t = two_sockets();
        let p = partition(&cpus, &t, &Partition::ByCounts(vec![1, 5]), 8).unwrap();
        assert_eq!(p.cpus, vec![vec![0], vec![1, 2, 3, 4, 5]]);
        assert_eq!(partition(&cpus, &t, &Partition::ByCounts(vec![4, 5]), 8), Err(PartitionError::InvalidCount));
        assert_eq!(partition(&cpus, &t, &Partition::ByCounts(vec![]), 8), Err(PartitionError::InvalidCount));
        assert_eq!(partition(&cpus, &t, &Partition::ByCounts(vec![1; 3]), 2), Err(PartitionError::InvalidCount));
        assert_eq!(partition(&cpus, &t, &Partition::ByCounts(vec![8]), 8), Err(PartitionError::Failed));
        assert_eq!(partition(&cpus, &t, &Partition::ByCounts(vec![7]), 8).unwrap().cpus.len(), 1);
    }

    #[test]
    fn by_affinity() {
        let cpus: Vec<usize> = (0..8).collect();
        let t = two_sockets();
        let numa = partition(&cpus, &t, &Partition::ByAffinity(AffinityDomain::Numa), 8).unwrap();
        assert_eq!(numa.cpus, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        let l2 = partition(&cpus, &t, &Partition::ByAffinity(AffinityDomain::Cache(2)), 8).unwrap();
        assert_eq!(l2.cpus.len(), 4);
        // No L4 on this host: not supported.
        let l4 = partition(&cpus, &t, &Partition::ByAffinity(AffinityDomain::Cache(4)), 8);
        assert_eq!(l4, Err(PartitionError::InvalidValue));
        // One node's sub-device: NUMA and L3 do not split it any more; the next domain is L2.
        let node = &numa.cpus[0];
        assert_eq!(partition(node, &t, &Partition::ByAffinity(AffinityDomain::Numa), 8), Err(PartitionError::Failed));
        let next = partition(node, &t, &Partition::ByAffinity(AffinityDomain::NextPartitionable), 8).unwrap();
        assert_eq!(next.domain, Some(AffinityDomain::Cache(2)));
        assert_eq!(next.cpus, vec![vec![0, 1], vec![2, 3]]);
        // One CPU: nothing splits it.
        let one = partition(&[5], &t, &Partition::ByAffinity(AffinityDomain::NextPartitionable), 8);
        assert_eq!(one, Err(PartitionError::Failed));
        // An empty topology supports no domain.
        let none = partition(&cpus, &Topology::default(), &Partition::ByAffinity(AffinityDomain::NextPartitionable), 8);
        assert_eq!(none, Err(PartitionError::InvalidValue));
    }

    /// The domains a device lists are those that split it: on one node with one L3 (this
    /// development machine's two CPUs), NUMA and L3 give one sub-device and are not listed.
    #[test]
    fn listed_domains_split_the_device() {
        let one_l3 = Topology {
            numa: vec![vec![0, 1]],
            caches: [vec![vec![0], vec![1]], vec![vec![0], vec![1]], vec![vec![0, 1]], vec![]],
        };
        let cpus = [0, 1];
        assert!(one_l3.has(AffinityDomain::Numa, &cpus));
        assert!(!one_l3.splits(AffinityDomain::Numa, &cpus));
        assert!(!one_l3.splits(AffinityDomain::Cache(3), &cpus));
        assert!(!one_l3.splits(AffinityDomain::Cache(4), &cpus));
        assert!(one_l3.splits(AffinityDomain::Cache(2), &cpus));
        assert!(one_l3.splits(AffinityDomain::Cache(1), &cpus));
        assert!(one_l3.splits(AffinityDomain::NextPartitionable, &cpus));
        // One CPU: nothing splits it, not even NEXT_PARTITIONABLE.
        assert!(!one_l3.splits(AffinityDomain::NextPartitionable, &[1]));
        // Two sockets: every level but L4 splits the whole machine; a node's L3 does not.
        let t = two_sockets();
        let all: Vec<usize> = (0..8).collect();
        assert!(t.splits(AffinityDomain::Numa, &all) && t.splits(AffinityDomain::Cache(3), &all));
        assert!(!t.splits(AffinityDomain::Cache(3), &all[..4]));
    }
}

//! What the host processor is: parsed from /proc and /sys, and from the CPU's feature bits.
//! Every reader has a fallback, so detection never fails.

use crate::info::VectorWidths;

/// The fields of /proc/cpuinfo the CPU device reports (first processor's values).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuInfoFields {
    pub model_name: Option<String>,
    pub vendor_id: Option<String>,
    pub mhz: Option<f64>,
}

/// Parses the text of /proc/cpuinfo.
pub fn parse_cpuinfo(text: &str) -> CpuInfoFields {
    let mut fields = CpuInfoFields::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        match key.trim() {
            "model name" if fields.model_name.is_none() && !value.is_empty() => {
                fields.model_name = Some(value.to_string())
            }
            "vendor_id" if fields.vendor_id.is_none() && !value.is_empty() => {
                fields.vendor_id = Some(value.to_string())
            }
            "cpu MHz" if fields.mhz.is_none() => {
                fields.mhz = value.parse().ok().filter(|m: &f64| m.is_finite() && *m > 0.0)
            }
            _ => {}
        }
    }
    fields
}

/// MemTotal of /proc/meminfo, in bytes.
pub fn parse_meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut parts = line["MemTotal:".len()..].split_whitespace();
    let value: u64 = parts.next()?.parse().ok()?;
    let unit = match parts.next() {
        Some("kB") | Some("KB") | Some("kb") => 1024,
        Some("B") | None => 1,
        _ => return None,
    };
    value.checked_mul(unit)
}

/// A size as written in /sys cache entries ("32K", "1024K", "32M", "512").
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let value: u64 = digits.parse().ok()?;
    let scale = match unit.trim() {
        "" => 1,
        "K" | "k" | "KB" | "KiB" => 1 << 10,
        "M" | "MB" | "MiB" => 1 << 20,
        "G" | "GB" | "GiB" => 1 << 30,
        _ => return None,
    };
    value.checked_mul(scale)
}

/// CL_DEVICE_VENDOR and CL_DEVICE_VENDOR_ID (the PCI vendor id) for a cpuinfo `vendor_id`.
pub fn vendor(vendor_id: Option<&str>) -> (String, u32) {
    match vendor_id {
        Some("GenuineIntel") => ("Intel(R) Corporation".into(), 0x8086),
        Some("AuthenticAMD") => ("Advanced Micro Devices, Inc.".into(), 0x1022),
        Some("HygonGenuine") => ("Chengdu Haiguang IC Design Co., Ltd.".into(), 0x1d94),
        Some("CentaurHauls") => ("Centaur Technology, Inc.".into(), 0x1106),
        Some(other) => (other.to_string(), 0),
        None => ("Unknown vendor".into(), 0),
    }
}

/// The name reported when /proc/cpuinfo has no model name.
pub fn fallback_name() -> String {
    if cfg!(target_arch = "x86_64") {
        "x86-64 CPU".into()
    } else {
        format!("{} CPU", std::env::consts::ARCH)
    }
}

/// The largest cache of the first CPU (data or unified), from /sys.
pub fn largest_cache_bytes() -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
        .filter(|e| std::fs::read_to_string(e.path().join("type")).is_ok_and(|t| t.trim() != "Instruction"))
        .filter_map(|e| parse_size(&std::fs::read_to_string(e.path().join("size")).ok()?))
        .max()
}

/// The maximum clock of the first CPU from cpufreq, in MHz.
pub fn cpufreq_max_mhz() -> Option<u32> {
    let khz: u64 =
        std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").ok()?.trim().parse().ok()?;
    u32::try_from(khz / 1000).ok().filter(|&m| m > 0)
}

/// SIMD register widths the host has, in bytes, per kind of element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimdBytes {
    /// For 8- and 16-bit integers.
    pub small_int: u32,
    /// For 32- and 64-bit integers.
    pub int: u32,
    /// For floating point.
    pub float: u32,
}

impl SimdBytes {
    /// Detects the host's vector registers (x86: AVX-512 / AVX2 / AVX / SSE2; other
    /// architectures: 128-bit).
    pub fn host() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            let avx512f = std::arch::is_x86_feature_detected!("avx512f");
            let avx512bw = std::arch::is_x86_feature_detected!("avx512bw");
            let avx2 = std::arch::is_x86_feature_detected!("avx2");
            let avx = std::arch::is_x86_feature_detected!("avx");
            Self::from_features(avx512f, avx512bw, avx2, avx)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Self::from_features(false, false, false, false)
        }
    }

    /// AVX-512F gives 64-byte registers for 32/64-bit elements (AVX-512BW for 8/16-bit);
    /// AVX2 32 bytes for everything; AVX 32 bytes for floating point only; else 16.
    pub fn from_features(avx512f: bool, avx512bw: bool, avx2: bool, avx: bool) -> Self {
        let float = if avx512f {
            64
        } else if avx || avx2 {
            32
        } else {
            16
        };
        let int = if avx512f {
            64
        } else if avx2 {
            32
        } else {
            16
        };
        let small_int = if avx512f && avx512bw {
            64
        } else if avx2 {
            32
        } else {
            16
        };
        Self { small_int, int, float }
    }

    /// Vector widths in elements. `half` is 0: the device does not support it (the
    /// specification requires 0 for an unsupported type); doubles fill the registers as longs do.
    pub fn vector_widths(&self) -> VectorWidths {
        VectorWidths {
            char: self.small_int,
            short: self.small_int / 2,
            int: self.int / 4,
            long: self.int / 8,
            half: 0,
            float: self.float / 4,
            double: self.float / 8,
        }
    }

    /// Lanes of 32-bit floats: the width work-items are packed at (16 / 8 / 4).
    pub fn float_lanes(&self) -> usize {
        (self.float / 4) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel name\t:  Intel(R) Xeon(R) CPU @ 2.20GHz \ncpu MHz\t\t: 2200.154\nflags\t\t: fpu sse\n\nprocessor\t: 1\nmodel name\t: other\n";
        let f = parse_cpuinfo(text);
        assert_eq!(f.model_name.as_deref(), Some("Intel(R) Xeon(R) CPU @ 2.20GHz"));
        assert_eq!(f.vendor_id.as_deref(), Some("GenuineIntel"));
        assert_eq!(f.mhz, Some(2200.154));
        assert_eq!(parse_cpuinfo("garbage\n: :\nmodel name:\ncpu MHz: nan"), CpuInfoFields::default());
    }

    #[test]
    fn meminfo_and_sizes() {
        assert_eq!(parse_meminfo_total("MemTotal:       16318164 kB\nMemFree: 1 kB\n"), Some(16318164 * 1024));
        assert_eq!(parse_meminfo_total("MemFree: 1 kB\n"), None);
        assert_eq!(parse_meminfo_total("MemTotal: lots kB\n"), None);
        assert_eq!(parse_size("32K\n"), Some(32 << 10));
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("99999999999999999999K"), None);
    }

    #[test]
    fn vendors() {
        assert_eq!(vendor(Some("GenuineIntel")), ("Intel(R) Corporation".to_string(), 0x8086));
        assert_eq!(vendor(Some("AuthenticAMD")), ("Advanced Micro Devices, Inc.".to_string(), 0x1022));
        assert_eq!(vendor(Some("Foo")).1, 0);
        assert_eq!(vendor(None).1, 0);
    }

    #[test]
    fn simd_widths() {
        let avx512 = SimdBytes::from_features(true, true, true, true);
        assert_eq!(avx512.float_lanes(), 16);
        assert_eq!(
            avx512.vector_widths(),
            VectorWidths { char: 64, short: 32, int: 16, long: 8, half: 0, float: 16, double: 8 }
        );
        let avx2 = SimdBytes::from_features(false, false, true, true);
        assert_eq!(avx2.float_lanes(), 8);
        assert_eq!(
            avx2.vector_widths(),
            VectorWidths { char: 32, short: 16, int: 8, long: 4, half: 0, float: 8, double: 4 }
        );
        let avx = SimdBytes::from_features(false, false, false, true);
        assert_eq!(avx.float_lanes(), 8);
        assert_eq!(avx.vector_widths().int, 4);
        let sse = SimdBytes::from_features(false, false, false, false);
        assert_eq!(sse.float_lanes(), 4);
        assert_eq!(
            sse.vector_widths(),
            VectorWidths { char: 16, short: 8, int: 4, long: 2, half: 0, float: 4, double: 2 }
        );
    }
}

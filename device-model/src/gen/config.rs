//! Parameters of the modelled Intel Gen GPUs (/work/shared/reference/gen-model.md: Intel's
//! Gen9/Gen11/Xe-LP architecture papers, NEO, IGC and the occupancy calculator).

/// Environment variable selecting the configuration.
pub const CONFIG_ENV: &str = "SOFTCL_GEN_CONFIG";

/// How shared local memory is allocated to a work-group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlmAllocRule {
    /// `max(min, next_pow2(size))` (Intel's runtime and compiler; 1 KiB minimum on Gen9+).
    PowerOfTwo { min: u64 },
    /// `max(min, round_up(size, granularity))` (the optimisation guide: 4 KiB minimum,
    /// 1 KiB granularity).
    Granular { min: u64, granularity: u64 },
}

impl SlmAllocRule {
    /// Bytes allocated for a work-group using `slm` bytes (0 for none).
    pub fn allocation(&self, slm: u64) -> u64 {
        if slm == 0 {
            return 0;
        }
        match *self {
            SlmAllocRule::PowerOfTwo { min } => slm.checked_next_power_of_two().unwrap_or(u64::MAX).max(min),
            SlmAllocRule::Granular { min, granularity } => {
                slm.checked_next_multiple_of(granularity.max(1)).unwrap_or(u64::MAX).max(min)
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct GenConfig {
    /// The configuration's key ("gen9-gt2").
    pub key: &'static str,
    /// CL_DEVICE_NAME.
    pub device_name: &'static str,
    pub slices: u32,
    pub subslices_per_slice: u32,
    pub eus_per_subslice: u32,
    pub threads_per_eu: u32,
    /// General register file per hardware thread: registers x bytes.
    pub grf_registers: u32,
    pub grf_register_bytes: u32,
    pub fp32_flops_per_clock_per_eu: u32,
    /// fp64 throughput relative to fp32 (`None`: no fp64 hardware, so no `cl_khr_fp64`).
    pub fp64_rate: Option<f32>,
    /// L3 cache of the whole GPU in bytes, and the part usable for data.
    pub l3_bytes: u64,
    pub l3_data_bytes: u64,
    pub cacheline_bytes: u32,
    /// Data port <-> L3 bandwidth per sub-slice.
    pub dataport_bytes_per_clock: u32,
    /// GTI bandwidth to the LLC / DRAM.
    pub gti_read_bytes_per_clock: u32,
    pub gti_write_bytes_per_clock: u32,
    /// Shared local memory per sub-slice, and at most per work-group.
    pub slm_bytes_per_subslice: u64,
    pub slm_max_per_work_group: u64,
    pub slm_banks: u32,
    pub slm_bank_bytes: u32,
    pub slm_bytes_per_clock: u32,
    pub slm_alloc: SlmAllocRule,
    /// Barrier registers per sub-slice (the guide and whitepaper: 16 on Gen9; NEO and the
    /// occupancy calculator: 32).
    pub barriers_per_subslice: u32,
    pub max_work_group_size: usize,
    pub preferred_work_group_multiple: usize,
    pub base_clock_mhz: u32,
    pub max_clock_mhz: u32,
    /// SIMD widths the compiler can choose (the sub-group sizes of the real device).
    pub simd_widths: &'static [usize],
    /// Timestamp period of the GPU's timer.
    pub timer_resolution_ns: usize,
    pub printf_buffer_bytes: usize,
    /// Highest SPIR-V 1.x minor version the real driver accepts.
    pub spirv_max_minor: u32,
    /// Sustained bandwidth of the system memory behind the GTI, in bytes per second (the
    /// model's memory roof is the smaller of this and the GTI at the clock; not in
    /// gen-model.md: the dual-channel DRAM these parts shipped with).
    pub dram_bytes_per_sec: f64,
    /// Clocks a hardware thread waits for a global / constant / private load or atomic (the
    /// model's estimate: between an L3 hit and a DRAM access).
    pub global_latency_clocks: u32,
    /// Clocks a hardware thread waits for an SLM load or atomic.
    pub slm_latency_clocks: u32,
    /// Clocks the L3 spends on each lane's atomic to one address while others wait for it
    /// (atomics on one address serialise; the model's estimate).
    pub l3_atomic_clocks: u32,
    /// Clocks every hardware thread of a work-group waits at one barrier once the last one
    /// arrived (the model's estimate of the barrier round trip).
    pub barrier_latency_clocks: u32,
}

impl GenConfig {
    /// Gen9 GT2 (HD 530 / UHD 620), the default.
    pub fn gen9_gt2() -> Self {
        Self {
            key: "gen9-gt2",
            device_name: "Intel(R) Gen9 HD Graphics GT2 (SoftCL model)",
            slices: 1,
            subslices_per_slice: 3,
            eus_per_subslice: 8,
            threads_per_eu: 7,
            grf_registers: 128,
            grf_register_bytes: 32,
            fp32_flops_per_clock_per_eu: 16,
            fp64_rate: Some(0.25),
            l3_bytes: 768 << 10,
            l3_data_bytes: 512 << 10,
            cacheline_bytes: 64,
            dataport_bytes_per_clock: 64,
            gti_read_bytes_per_clock: 64,
            gti_write_bytes_per_clock: 32,
            slm_bytes_per_subslice: 64 << 10,
            slm_max_per_work_group: 64 << 10,
            slm_banks: 16,
            slm_bank_bytes: 4,
            slm_bytes_per_clock: 64,
            slm_alloc: SlmAllocRule::PowerOfTwo { min: 1 << 10 },
            barriers_per_subslice: 16,
            max_work_group_size: 256,
            preferred_work_group_multiple: 32,
            base_clock_mhz: 300,
            max_clock_mhz: 1150,
            simd_widths: &[8, 16, 32],
            timer_resolution_ns: 83,
            printf_buffer_bytes: 4 << 20,
            spirv_max_minor: 3,
            // Dual-channel DDR4-2133: 2 x 8 B x 2133 MT/s.
            dram_bytes_per_sec: 34.1e9,
            global_latency_clocks: 300,
            slm_latency_clocks: 40,
            l3_atomic_clocks: 4,
            barrier_latency_clocks: 50,
        }
    }

    /// Gen9 GT3 (Iris 540/550): two slices.
    pub fn gen9_gt3() -> Self {
        Self {
            key: "gen9-gt3",
            device_name: "Intel(R) Gen9 Iris Graphics GT3 (SoftCL model)",
            slices: 2,
            l3_bytes: 1536 << 10,
            l3_data_bytes: 1024 << 10,
            max_clock_mhz: 1000,
            ..Self::gen9_gt2()
        }
    }

    /// Gen11 GT2 (Ice Lake Iris Plus G7, 64 EUs). Its clock is not in gen-model.md: 1100 MHz
    /// is the Iris Plus G7's maximum.
    pub fn gen11_gt2() -> Self {
        Self {
            key: "gen11-gt2",
            device_name: "Intel(R) Gen11 Iris Plus Graphics GT2 (SoftCL model)",
            subslices_per_slice: 8,
            fp64_rate: None,
            l3_bytes: 3072 << 10,
            l3_data_bytes: 3072 << 10,
            barriers_per_subslice: 32,
            max_clock_mhz: 1100,
            // LPDDR4X-3733, 128 bits.
            dram_bytes_per_sec: 59.7e9,
            ..Self::gen9_gt2()
        }
    }

    /// Xe-LP (Tiger Lake Iris Xe, 96 EUs in 6 dual sub-slices). Its clock is not in
    /// gen-model.md: 1350 MHz is the 96 EU part's maximum; its timer runs at 19.2 MHz.
    pub fn xe_lp() -> Self {
        Self {
            key: "xe-lp",
            device_name: "Intel(R) Xe-LP Iris Xe Graphics 96EU (SoftCL model)",
            subslices_per_slice: 6,
            eus_per_subslice: 16,
            fp64_rate: None,
            l3_bytes: 3840 << 10,
            l3_data_bytes: 3840 << 10,
            dataport_bytes_per_clock: 128,
            slm_bytes_per_subslice: 128 << 10,
            barriers_per_subslice: 32,
            max_work_group_size: 512,
            preferred_work_group_multiple: 64,
            max_clock_mhz: 1350,
            timer_resolution_ns: 52,
            // LPDDR4X-4266, 128 bits.
            dram_bytes_per_sec: 68.3e9,
            ..Self::gen9_gt2()
        }
    }

    /// Every configuration, the default first.
    pub fn all() -> Vec<Self> {
        vec![Self::gen9_gt2(), Self::gen9_gt3(), Self::gen11_gt2(), Self::xe_lp()]
    }

    /// The configuration called `name` ("gen9-gt2", "gen9_gt2", "GEN9-GT2" ...).
    pub fn by_name(name: &str) -> Option<Self> {
        let wanted = name.trim().to_ascii_lowercase().replace('_', "-");
        Self::all().into_iter().find(|c| c.key == wanted)
    }

    /// The configuration chosen by `SOFTCL_GEN_CONFIG`, or the default when unset. An unknown
    /// name is an error listing the known ones.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(CONFIG_ENV) {
            Ok(v) if !v.trim().is_empty() => Self::by_name(&v).ok_or_else(|| {
                let known: Vec<_> = Self::all().iter().map(|c| c.key).collect();
                format!("{CONFIG_ENV}={v} is not a known configuration ({})", known.join(", "))
            }),
            _ => Ok(Self::default()),
        }
    }

    pub fn subslices(&self) -> u32 {
        self.slices * self.subslices_per_slice
    }

    /// EUs of the GPU (CL_DEVICE_MAX_COMPUTE_UNITS, as Intel reports it).
    pub fn eus(&self) -> u32 {
        self.subslices() * self.eus_per_subslice
    }

    pub fn threads_per_subslice(&self) -> u32 {
        self.eus_per_subslice * self.threads_per_eu
    }

    pub fn grf_bytes_per_thread(&self) -> u32 {
        self.grf_registers * self.grf_register_bytes
    }

    /// The clock the model runs at (the maximum: kernels run boosted), in clocks per ns.
    pub fn clocks_per_ns(&self) -> f64 {
        f64::from(self.max_clock_mhz) / 1000.0
    }

    /// Peak FP32 FLOP/s: EUs x FLOP per clock per EU x clock.
    pub fn peak_flops(&self) -> f64 {
        f64::from(self.eus()) * f64::from(self.fp32_flops_per_clock_per_eu) * f64::from(self.max_clock_mhz) * 1e6
    }

    /// The memory roof in bytes per second: the GTI's read bandwidth at the clock, or the
    /// DRAM behind it if that is slower.
    pub fn memory_bytes_per_sec(&self) -> f64 {
        let gti = f64::from(self.gti_read_bytes_per_clock) * f64::from(self.max_clock_mhz) * 1e6;
        gti.min(self.dram_bytes_per_sec)
    }
}

impl Default for GenConfig {
    fn default() -> Self {
        Self::gen9_gt2()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations() {
        let gt2 = GenConfig::gen9_gt2();
        assert_eq!((gt2.eus(), gt2.subslices(), gt2.threads_per_subslice()), (24, 3, 56));
        assert_eq!(gt2.grf_bytes_per_thread(), 4096);
        assert!((gt2.peak_flops() - 441.6e9).abs() < 1.0, "24 EUs x 16 x 1.15 GHz");
        assert_eq!(gt2.memory_bytes_per_sec(), 34.1e9, "DRAM below the GTI's 73.6 GB/s");
        assert_eq!(GenConfig::gen9_gt3().eus(), 48);
        assert_eq!(GenConfig::gen11_gt2().eus(), 64);
        assert_eq!(GenConfig::xe_lp().eus(), 96);
        assert_eq!(GenConfig::xe_lp().max_work_group_size, 512);
        assert_eq!(GenConfig::by_name("GEN9_GT3").map(|c| c.key), Some("gen9-gt3"));
        assert_eq!(GenConfig::by_name(" xe-lp ").map(|c| c.key), Some("xe-lp"));
        assert!(GenConfig::by_name("gen12").is_none());
        let keys: Vec<_> = GenConfig::all().iter().map(|c| c.key).collect();
        assert_eq!(keys, ["gen9-gt2", "gen9-gt3", "gen11-gt2", "xe-lp"]);
    }

    #[test]
    fn slm_allocation() {
        let pow2 = SlmAllocRule::PowerOfTwo { min: 1024 };
        assert_eq!(pow2.allocation(0), 0);
        assert_eq!(pow2.allocation(1), 1024);
        assert_eq!(pow2.allocation(1025), 2048);
        assert_eq!(pow2.allocation(5000), 8192);
        let guide = SlmAllocRule::Granular { min: 4096, granularity: 1024 };
        assert_eq!(guide.allocation(1), 4096);
        assert_eq!(guide.allocation(5000), 5120);
        assert_eq!(pow2.allocation(u64::MAX), u64::MAX);
    }
}

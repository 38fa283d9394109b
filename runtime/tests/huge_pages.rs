//! Large buffers live on transparent huge pages (the CPU device's bandwidth targets).
//!
//! One test in its own process (this file's binary): it reads this process's memory map
//! (/proc/self/smaps) around a buffer, which other tests allocating concurrently in the same
//! process would disturb (a freed range can be mapped again by another thread at once).
#![cfg(target_os = "linux")]

use softcl_runtime::cl::*;
use softcl_runtime::memory::raw::{self, Storage, HUGE_PAGE};

/// One mapping (VMA) of /proc/self/smaps: its range and its "Key: value" fields.
struct Vma {
    start: usize,
    end: usize,
    fields: Vec<(String, String)>,
}

impl Vma {
    fn field(&self, key: &str) -> Option<&str> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

fn smaps() -> Vec<Vma> {
    let text = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
    let mut vmas: Vec<Vma> = Vec::new();
    for line in text.lines() {
        let head = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = head.split_once('-') {
            if let (Ok(start), Ok(end)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                vmas.push(Vma { start, end, fields: Vec::new() });
                continue;
            }
        }
        if let (Some(vma), Some((k, v))) = (vmas.last_mut(), line.split_once(':')) {
            vma.fields.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    vmas
}

/// The mapping holding `addr .. addr + len` whole, if one does.
fn vma_covering(addr: usize, len: usize) -> Option<Vma> {
    smaps().into_iter().find(|v| v.start <= addr && addr + len <= v.end)
}

/// Resident kilobytes of a mapping ("Rss:   123 kB").
fn rss_kb(vma: &Vma) -> usize {
    let rss = vma.field("Rss").expect("smaps has Rss");
    rss.trim_end_matches("kB").trim().parse().expect("Rss in kB")
}

/// False when the host disabled transparent huge pages ("[never]"), or has none.
fn thp_available() -> bool {
    match std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled") {
        Ok(s) => !s.contains("[never]"),
        Err(_) => false,
    }
}

#[test]
fn large_buffers_are_aligned_lazily_committed_thp_eligible_zeroed_and_unmapped() {
    const LEN: usize = 64 << 20;
    let s = Storage::alloc(LEN).unwrap();
    let addr = s.as_ptr() as usize;
    assert!(s.is_owned());
    // Within the first 4 KiB of a 2 MiB page: at its start or a stagger offset after it
    // (raw::STAGGER), and aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN.
    assert!(addr % HUGE_PAGE < 4096, "a {} MiB buffer starts near a 2 MiB boundary: {addr:#x}", LEN >> 20);
    assert_eq!(addr % raw::BUFFER_ALIGN, 0);

    // Its own mapping, nothing of it committed before the first touch.
    let vma = vma_covering(addr, LEN).expect("the buffer's range is mapped");
    assert_eq!(rss_kb(&vma), 0, "an untouched buffer has no resident pages");
    if thp_available() {
        assert_eq!(
            vma.field("THPeligible"),
            Some("1"),
            "the buffer's mapping {:#x}-{:#x} may use transparent huge pages",
            vma.start,
            vma.end
        );
    } else {
        eprintln!("transparent huge pages are disabled on this host: THP eligibility not checked");
    }

    // Touching one byte commits at most one huge page, not the buffer.
    raw::fill(&s, LEN / 2, &[0xa5], 1).unwrap();
    let vma = vma_covering(addr, LEN).expect("the buffer's range is mapped");
    assert!(rss_kb(&vma) <= HUGE_PAGE / 1024, "one touched byte committed {} kB", rss_kb(&vma));

    // Zero-initialised everywhere else; writes survive and stay in place.
    let bytes = s.to_vec(0, LEN).unwrap();
    assert_eq!(bytes[LEN / 2], 0xa5);
    assert_eq!(bytes.iter().filter(|&&b| b != 0).count(), 1, "a new buffer reads as zero");
    raw::fill(&s, 0, &[1, 2, 3, 4], 8).unwrap();
    raw::fill(&s, LEN - 4, &[9, 8, 7, 6], 4).unwrap();
    assert_eq!(s.to_vec(0, 8).unwrap(), [1, 2, 3, 4, 1, 2, 3, 4]);
    assert_eq!(s.to_vec(LEN - 4, 4).unwrap(), [9, 8, 7, 6]);
    assert_eq!(s.to_vec(LEN / 2 - 1, 3).unwrap(), [0, 0xa5, 0]);
    assert_eq!(raw::fill(&s, LEN - 2, &[1, 2, 3, 4], 4), Err(CL_INVALID_VALUE));

    // Dropping the buffer returns its range to the kernel.
    drop(s);
    let left: Vec<_> = smaps().into_iter().filter(|v| v.start < addr + LEN && addr < v.end).collect();
    assert!(
        left.is_empty(),
        "{:#x}-{:#x} is still mapped after the buffer was dropped: {:?}",
        addr,
        addr + LEN,
        left.iter().map(|v| format!("{:#x}-{:#x}", v.start, v.end)).collect::<Vec<_>>()
    );

    // So do the next buffers, which start at a stagger offset into their mapping: the whole
    // mapping goes, from its 2 MiB boundary.
    for _ in 0..3 {
        let s = Storage::alloc(LEN).unwrap();
        let (addr, base) = (s.as_ptr() as usize, s.as_ptr() as usize / HUGE_PAGE * HUGE_PAGE);
        raw::fill(&s, LEN - 1, &[1], 1).unwrap();
        drop(s);
        let left = smaps().into_iter().filter(|v| v.start < addr + LEN && base < v.end).count();
        assert_eq!(left, 0, "{base:#x} (buffer at {addr:#x}) is still mapped after the drop");
    }
}

//! Page-aligned buffers whose pages are faulted in before any timing starts.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

pub struct AlignedBuffer {
    ptr: NonNull<u8>,
    layout: Layout,
    /// Allocated with mmap rather than the global allocator.
    mapped: bool,
}

// SAFETY: the buffer is plain memory; callers that share it between threads access it
// only through atomic or volatile word operations.
unsafe impl Send for AlignedBuffer {}
unsafe impl Sync for AlignedBuffer {}

const PAGE: usize = 4096;
const HUGE_PAGE: usize = 2 << 20;

impl AlignedBuffer {
    /// `bytes` of zeroed memory, page-aligned, every page touched. `None` if the
    /// allocation fails (the caller says what to do about it).
    pub fn new(bytes: usize) -> Option<Self> {
        let layout = Layout::from_size_align(bytes.max(8), PAGE).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        let buf = Self {
            ptr,
            layout,
            mapped: false,
        };
        buf.fault_in();
        Some(buf)
    }

    /// Zeroed and page-aligned like `new`, but an anonymous mapping whose pages the
    /// kernel provides on first touch: for buffers that may be large and only partly
    /// used (dd's `bs=2G count=0`). The allocator would memset an aligned allocation.
    pub fn lazy(bytes: usize) -> Option<Self> {
        let len = bytes.max(8).next_multiple_of(PAGE);
        // SAFETY: an anonymous private mapping; the result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        Some(Self {
            ptr: NonNull::new(ptr.cast())?,
            layout: Layout::from_size_align(len, PAGE).ok()?,
            mapped: true,
        })
    }

    /// Like `new`, but 2 MiB-aligned and advised to use transparent huge pages, so a
    /// large random walk measures memory rather than page-table walks. Returns the
    /// buffer and whether the kernel took the advice.
    pub fn with_thp(bytes: usize) -> Option<(Self, bool)> {
        let layout =
            Layout::from_size_align(bytes.max(8).next_multiple_of(HUGE_PAGE), HUGE_PAGE).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        // SAFETY: advice on memory we own; failure only means no huge pages.
        let advised =
            unsafe { libc::madvise(ptr.as_ptr().cast(), layout.size(), libc::MADV_HUGEPAGE) } == 0;
        let buf = Self {
            ptr,
            layout,
            mapped: false,
        };
        buf.fault_in();
        Some((buf, advised && thp_enabled()))
    }

    /// Backed by 2 MiB huge pages (sysbench's `--memory-hugetlb`); needs huge pages
    /// reserved in /proc/sys/vm/nr_hugepages.
    pub fn huge(bytes: usize) -> Result<Self, std::io::Error> {
        let len = bytes.max(8).div_ceil(HUGE_PAGE) * HUGE_PAGE;
        // SAFETY: an anonymous private mapping; the result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let buf = Self {
            ptr: NonNull::new(ptr.cast()).expect("mmap returned null"),
            layout: Layout::from_size_align(len, HUGE_PAGE).expect("valid layout"),
            mapped: true,
        };
        buf.fault_in();
        Ok(buf)
    }

    /// Writes one word per page so the kernel maps every page now, not during timing
    /// (calloc'd memory would otherwise share the zero page until first write).
    fn fault_in(&self) {
        let base = self.ptr.as_ptr();
        for offset in (0..self.layout.size()).step_by(PAGE) {
            // SAFETY: offset is inside the allocation.
            unsafe { base.add(offset).write_volatile(0) };
        }
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn words(&self) -> *mut u64 {
        self.ptr.as_ptr().cast()
    }
}

impl Drop for AlignedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` or `huge` with exactly this layout.
        unsafe {
            if self.mapped {
                libc::munmap(self.ptr.as_ptr().cast(), self.layout.size());
            } else {
                dealloc(self.ptr.as_ptr(), self.layout);
            }
        }
    }
}

/// Whether transparent huge pages can be had (`always` or `madvise` mode).
fn thp_enabled() -> bool {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .is_ok_and(|s| !s.contains("[never]"))
}

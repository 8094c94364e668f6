//! glibc's allocator settings for a process that serves large SQLite answers.
//!
//! A 500-record CVE answer is about 1.3 MB, built by SQLite on a connection's worker
//! thread, copied out by sqlx and spliced into the response on a runtime thread. With
//! glibc's defaults every buffer of that size is an `mmap` of its own (or grows a
//! thread arena that is trimmed again on free), so each answer pays page faults and
//! zeroing for ~5 MB of fresh pages: measured on this project's 2-core machine, the
//! served forms of 500 records took 4.6–5.0 ms with the defaults and 1.3–1.4 ms with
//! the settings below (docs/PERFORMANCE.md). Keeping up to 32 MiB free per arena costs
//! at most that much resident memory per arena once it has been used.

/// Allocations below this come from the arenas, not from an `mmap` of their own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 8 << 20;
/// Free memory an arena keeps before giving it back to the kernel.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: libc::c_int = 32 << 20;

/// Applies the settings above; call once, first thing in `main`. A no-op where the C
/// library is not glibc, or when `RAMPART_MALLOC_DEFAULTS` is set (to compare the two in
/// a benchmark). True when they were applied.
pub fn tune_allocator() -> bool {
    if std::env::var_os("RAMPART_MALLOC_DEFAULTS").is_some() {
        return false;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes allocator parameters; it is called with valid
        // parameter numbers and values, and glibc serialises it with the arenas' locks.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn the_settings_are_accepted() {
        assert!(std::env::var_os("RAMPART_MALLOC_DEFAULTS").is_some() || super::tune_allocator());
    }
}

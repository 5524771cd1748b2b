//! `char_width` against the C library's `wcwidth`, for every code point glibc gives a width.
//!
//! Its own test binary: `setlocale` changes the whole process, and this is its only test, so no other
//! thread uses the locale while it changes. The width table was generated from glibc 2.36 (Debian 12),
//! the C library of this project's CI; a C library with other widths fails here, with the code points
//! and how to regenerate the table.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::ffi::CStr;

use screenpilot_screen::char_width;

// The libc crate does not declare wcwidth.
extern "C" {
    fn wcwidth(c: libc::wchar_t) -> libc::c_int;
}

#[test]
fn char_width_is_glibc_wcwidth_wherever_glibc_knows_the_character() {
    // SAFETY: the only test of this binary sets the locale before any width is asked; the name is
    // NUL-terminated.
    let locale = unsafe { libc::setlocale(libc::LC_ALL, c"C.UTF-8".as_ptr()) };
    assert!(!locale.is_null(), "the C.UTF-8 locale is not available");
    // SAFETY: gnu_get_libc_version returns a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(libc::gnu_get_libc_version()) };
    let version = version.to_string_lossy();
    // SAFETY: wcwidth takes any wchar_t value and reads only the locale set above.
    let glibc = |c: char| unsafe { wcwidth(c as libc::wchar_t) };
    // Without a UTF-8 locale every non-ASCII character is -1 and the walk below would check nothing.
    assert_eq!(glibc('\u{4E00}'), 2, "wcwidth does not know CJK: not UTF-8");

    let mut checked = 0;
    let mut wrong = Vec::new();
    for c in (0..=0x10FFFF_u32).filter_map(char::from_u32) {
        // Control characters are not printed (glibc: -1, but 0 for NUL); -1 is a code point this
        // glibc does not know, where the emulator keeps unicode-width's width.
        let Ok(width) = usize::try_from(glibc(c)) else {
            continue;
        };
        if c.is_control() {
            continue;
        }
        checked += 1;
        if char_width(c) != Some(width) {
            wrong.push(format!(
                "U+{:04X}: glibc {width}, char_width {:?}",
                c as u32,
                char_width(c)
            ));
        }
    }
    // glibc 2.36 gives a width to 282,163 printable code points; far fewer means a broken locale.
    assert!(checked > 250_000, "only {checked} code points have a width");
    assert!(
        wrong.is_empty(),
        "glibc {version}: {} code points differ (regenerate src/width_table.rs: \
         see examples/width_table.rs):\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

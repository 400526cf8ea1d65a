//! Names and values a user reads in a Rust program (test_rust.py): built
//! with v0 mangling and with the legacy scheme.
use std::path::Path;

pub struct Counter {
    n: i32,
}

impl Counter {
    #[inline(never)]
    pub fn bump(&mut self, by: i32) -> i32 {
        self.n += opaque(by);
        self.n
    }
}

#[inline(never)]
pub fn twice<T: Copy + Into<i64>>(x: T) -> i64 {
    opaque(x).into() * 2
}

#[inline(never)]
pub fn describe(name: &str, path: &Path) -> usize {
    name.bytes().filter(|b| *b == b'l').count() + std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str())[1] as usize
}


fn main() {
    let mut c = Counter { n: 1 };
    let mut t = c.bump(opaque(2)) as i64;
    t += c.bump(opaque(3)) as i64;
    t += twice(opaque(7u8)) + twice(opaque(-5i32));
    t += describe(opaque("héllo"), opaque(Path::new("/tmp/x.txt"))) as i64;
    let e = std::io::Error::from(std::io::ErrorKind::NotFound);
    println!("t={} kind={:?}", t, e.kind());
}

/// The arguments are not constants to rustc: std::hint::black_box for
/// Debian bookworm's rustc 1.63 (it came in 1.66),
/// a volatile read the optimizer cannot see through, inlined (no symbol).
#[inline(always)]
fn opaque<T>(x: T) -> T {
    let y = unsafe { std::ptr::read_volatile(&x) };
    std::mem::forget(x);
    y
}

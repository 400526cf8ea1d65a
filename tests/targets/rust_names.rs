//! Names and values a user reads in a Rust program (test_rust.py): built
//! with v0 mangling and with the legacy scheme.
use std::path::Path;

pub struct Counter {
    n: i32,
}

impl Counter {
    #[inline(never)]
    pub fn bump(&mut self, by: i32) -> i32 {
        self.n += std::hint::black_box(by);
        self.n
    }
}

#[inline(never)]
pub fn twice<T: Copy + Into<i64>>(x: T) -> i64 {
    std::hint::black_box(x).into() * 2
}

#[inline(never)]
pub fn describe(name: &str, path: &Path) -> usize {
    name.bytes().filter(|b| *b == b'l').count() + path.as_os_str().as_encoded_bytes()[1] as usize
}

use std::hint::black_box as opaque; // the arguments are not constants to rustc

fn main() {
    let mut c = Counter { n: 1 };
    let mut t = c.bump(opaque(2)) as i64;
    t += c.bump(opaque(3)) as i64;
    t += twice(opaque(7u8)) + twice(opaque(-5i32));
    t += describe(opaque("héllo"), opaque(Path::new("/tmp/x.txt"))) as i64;
    let e = std::io::Error::from(std::io::ErrorKind::NotFound);
    println!("t={} kind={:?}", t, e.kind());
}

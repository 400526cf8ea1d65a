use std::panic;

#[inline(never)]
#[no_mangle]
pub extern "Rust" fn risky(x: i32) -> i32 {
    if x % 2 == 1 {
        panic!("odd");
    }
    x + 100
}

mod m {
    /* A mangled Rust name (legacy: `m::outer::h<16 hex>`): shown without
     * its hash (test_rust.py). */
    #[inline(never)]
    pub fn outer(x: i32) -> i32 {
        super::opaque(x) * 2
    }
}

fn main() {
    panic::set_hook(Box::new(|_| {}));
    let mut sum = 0;
    let mut caught = 0;
    for i in 0..6 {
        match panic::catch_unwind(|| risky(opaque(i))) {
            Ok(v) => sum += v,
            Err(_) => caught += 1,
        }
    }
    sum += m::outer(0);
    println!("sum={} caught={}", sum, caught);
}

/// std::hint::black_box for Debian bookworm's rustc 1.63 (it came in 1.66):
/// a volatile read the optimizer cannot see through, inlined (no symbol).
#[inline(always)]
fn opaque<T>(x: T) -> T {
    let y = unsafe { std::ptr::read_volatile(&x) };
    std::mem::forget(x);
    y
}

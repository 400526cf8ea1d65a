// Rust enums passed by reference (typed through DWARF variant parts).

pub enum Shape {
    Circle(i32),
    Rect { w: u32, h: u32 },
    Pair(u8, i16),
    Empty,
}

#[inline(never)]
#[no_mangle]
pub fn look(o: &Option<u8>, r: &Result<i32, u8>, s: &Shape, p: &Option<&u32>) -> u32 {
    let a = o.unwrap_or(0) as u32;
    let b = match r { Ok(v) => *v as u32, Err(e) => *e as u32 };
    let c = match s { Shape::Circle(x) => *x as u32, Shape::Rect { w, h } => w * h, Shape::Pair(x, y) => *x as u32 + *y as u32, Shape::Empty => 0 };
    let d = p.map(|v| *v).unwrap_or(0);
    a + b + c + d
}

fn main() {
    let n = 77u32;
    let mut t = 0;
    t += look(opaque(&Some(5)), opaque(&Ok(-7)), opaque(&Shape::Circle(3)), opaque(&Some(&n)));
    t += look(opaque(&None), opaque(&Err(9)), opaque(&Shape::Rect { w: 4, h: 6 }), opaque(&None));
    t += look(opaque(&Some(255)), opaque(&Ok(1)), opaque(&Shape::Pair(2, -300)), opaque(&None));
    t += look(opaque(&None), opaque(&Ok(0)), opaque(&Shape::Empty), opaque(&Some(&n)));
    let q = [pick(opaque(Some(5)), opaque(None)), pick(opaque(None), opaque(Some(300)))];
    println!("t={} q={:?}", t, opaque(q));
}

// The same values by value (opt-level=1): Rust's ABI passes Option<u8> in
// two registers and returns it in al and dl, not as SysV would.
#[inline(never)]
#[no_mangle]
pub fn pick(a: Option<u8>, b: Option<u32>) -> Option<u8> {
    let x = a.unwrap_or(1).wrapping_add(b.unwrap_or(2) as u8);
    if x == 0 { None } else { Some(x) }
}

/// std::hint::black_box for Debian bookworm's rustc 1.63 (it came in 1.66):
/// a volatile read the optimizer cannot see through, inlined (no symbol).
#[inline(always)]
fn opaque<T>(x: T) -> T {
    let y = unsafe { std::ptr::read_volatile(&x) };
    std::mem::forget(x);
    y
}

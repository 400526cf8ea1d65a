// Rust enums passed by reference (typed through DWARF variant parts).
use std::hint::black_box;

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
    t += look(black_box(&Some(5)), black_box(&Ok(-7)), black_box(&Shape::Circle(3)), black_box(&Some(&n)));
    t += look(black_box(&None), black_box(&Err(9)), black_box(&Shape::Rect { w: 4, h: 6 }), black_box(&None));
    t += look(black_box(&Some(255)), black_box(&Ok(1)), black_box(&Shape::Pair(2, -300)), black_box(&None));
    t += look(black_box(&None), black_box(&Ok(0)), black_box(&Shape::Empty), black_box(&Some(&n)));
    let q = [pick(black_box(Some(5)), black_box(None)), pick(black_box(None), black_box(Some(300)))];
    println!("t={} q={:?}", t, black_box(q));
}

// The same values by value (opt-level=1): Rust's ABI passes Option<u8> in
// two registers and returns it in al and dl, not as SysV would.
#[inline(never)]
#[no_mangle]
pub fn pick(a: Option<u8>, b: Option<u32>) -> Option<u8> {
    let x = a.unwrap_or(1).wrapping_add(b.unwrap_or(2) as u8);
    if x == 0 { None } else { Some(x) }
}

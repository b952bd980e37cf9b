//! Dhrystone 2.1 (Weicker, 1988), written from the algorithm's description: the same
//! procedures, records, arrays and strings, executed in the same order per pass.
//!
//! UnixBench builds `dhry_1.c` and `dhry_2.c` as separate objects with gcc -O2 and no
//! link-time optimisation, so the procedures of the second file (Proc_6..8, Func_1..3)
//! are real calls from the main loop while Proc_2..5 get inlined. The boundaries are
//! reproduced with `#[inline(never)]`, and values that gcc cannot see across the file
//! boundary are passed through `opaque`, so LLVM does not fold more than gcc can.
//! String comparison is the C library's `strcmp`, as in the original.

use super::alarm;

/// An integer LLVM cannot see through (costs nothing: a register constraint).
#[inline(always)]
fn opaque(mut x: i32) -> i32 {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: an empty asm block that only claims to change a register.
    unsafe {
        std::arch::asm!("/* {0:e} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        x = std::hint::black_box(x);
    }
    x
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
enum Enumeration {
    Ident1,
    Ident2,
    Ident3,
    Ident4,
    #[allow(dead_code)] // Dhrystone declares five; its run never produces the last
    Ident5,
}
use Enumeration::*;

type Str30 = [u8; 31];

#[derive(Clone, Copy)]
#[repr(C)]
struct Record {
    ptr_comp: *mut Record,
    discr: Enumeration,
    enum_comp: Enumeration,
    int_comp: i32,
    str_comp: Str30,
}

/// Dhrystone's global variables.
struct Globals {
    ptr_glob: *mut Record,
    next_ptr_glob: *mut Record,
    int_glob: i32,
    bool_glob: bool,
    ch_1_glob: u8,
    ch_2_glob: u8,
    arr_1_glob: [i32; 50],
    arr_2_glob: [[i32; 50]; 50],
}

fn str30(text: &[u8; 30]) -> Str30 {
    let mut s = [0u8; 31];
    s[..30].copy_from_slice(text);
    s
}

/// Runs Dhrystone passes until the alarm; returns the pass counter as UnixBench
/// reports it (its `Run_Index`, one ahead of the passes completed).
pub fn run() -> u64 {
    run_until(|_| alarm::fired()).0
}

/// The benchmark proper; `stop` sees the pass counter before every pass.
#[inline(always)]
fn run_until(mut stop: impl FnMut(u64) -> bool) -> (u64, Box<Globals>, Box<[Record; 2]>) {
    let mut records = Box::new(
        [Record {
            ptr_comp: std::ptr::null_mut(),
            discr: Ident1,
            enum_comp: Ident1,
            int_comp: 0,
            str_comp: [0; 31],
        }; 2],
    );
    let base = records.as_mut_ptr();
    let mut g = Box::new(Globals {
        // SAFETY: both pointers are into `records`, which outlives the loop.
        ptr_glob: unsafe { base.add(1) },
        next_ptr_glob: base,
        int_glob: 0,
        bool_glob: false,
        ch_1_glob: 0,
        ch_2_glob: 0,
        arr_1_glob: [0; 50],
        arr_2_glob: [[0; 50]; 50],
    });
    // SAFETY: ptr_glob points at a live record.
    unsafe {
        let p = &mut *g.ptr_glob;
        p.ptr_comp = g.next_ptr_glob;
        p.discr = Ident1;
        p.enum_comp = Ident3;
        p.int_comp = 40;
        p.str_comp = str30(b"DHRYSTONE PROGRAM, SOME STRING");
    }
    let str_1_loc = str30(b"DHRYSTONE PROGRAM, 1'ST STRING");
    g.arr_2_glob[8][7] = 10;
    let mut run_index: u64 = 1;
    {
        let g = std::hint::black_box(&mut *g);
        loop {
            if stop(run_index) {
                break;
            }
            proc_5(g);
            proc_4(g);
            let mut int_1_loc: i32 = opaque(2);
            let mut int_2_loc: i32 = opaque(3);
            let mut str_2_loc = str30(b"DHRYSTONE PROGRAM, 2'ND STRING");
            let mut enum_loc = Ident2;
            g.bool_glob = !func_2(g, &str_1_loc, &str_2_loc);
            let mut int_3_loc = 0;
            while int_1_loc < int_2_loc {
                int_3_loc = 5 * int_1_loc - int_2_loc;
                proc_7(int_1_loc, int_2_loc, &mut int_3_loc);
                int_1_loc += 1;
            }
            proc_8(
                &mut g.arr_1_glob,
                &mut g.arr_2_glob,
                int_1_loc,
                int_3_loc,
                &mut g.int_glob,
            );
            proc_1(g, g.ptr_glob);
            let mut ch_index = b'A';
            while ch_index <= g.ch_2_glob {
                if enum_loc == func_1(g, ch_index, b'C') {
                    proc_6(g, Ident1, &mut enum_loc);
                    str_2_loc = str30(b"DHRYSTONE PROGRAM, 3'RD STRING");
                    int_2_loc = run_index as i32;
                    g.int_glob = run_index as i32;
                }
                ch_index += 1;
            }
            std::hint::black_box(&str_2_loc);
            int_2_loc *= int_1_loc;
            int_1_loc = int_2_loc / opaque(int_3_loc);
            int_2_loc = 7 * (int_2_loc - int_3_loc) - int_1_loc;
            proc_2(g, &mut int_1_loc);
            opaque(int_2_loc);
            run_index += 1;
        }
    }
    (run_index, g, records)
}

/// Record assignment through pointers, Proc_3, Proc_6, Proc_7.
#[inline(never)]
fn proc_1(g: &mut Globals, ptr_val_par: *mut Record) {
    // SAFETY: every record pointer is one of the two live records.
    unsafe {
        let next_record = (*ptr_val_par).ptr_comp;
        *(*ptr_val_par).ptr_comp = *g.ptr_glob;
        (*ptr_val_par).int_comp = 5;
        (*next_record).int_comp = (*ptr_val_par).int_comp;
        (*next_record).ptr_comp = (*ptr_val_par).ptr_comp;
        proc_3(g, &mut (*next_record).ptr_comp);
        if (*next_record).discr == Ident1 {
            (*next_record).int_comp = 6;
            proc_6(g, (*ptr_val_par).enum_comp, &mut (*next_record).enum_comp);
            (*next_record).ptr_comp = (*g.ptr_glob).ptr_comp;
            proc_7((*next_record).int_comp, 10, &mut (*next_record).int_comp);
        } else {
            *ptr_val_par = *(*ptr_val_par).ptr_comp;
        }
    }
}

#[inline]
fn proc_2(g: &mut Globals, int_par_ref: &mut i32) {
    let mut int_loc = *int_par_ref + 10;
    let mut enum_loc = Ident2;
    loop {
        if g.ch_1_glob == b'A' {
            int_loc -= 1;
            *int_par_ref = int_loc - g.int_glob;
            enum_loc = Ident1;
        }
        if enum_loc == Ident1 {
            break;
        }
    }
}

#[inline]
fn proc_3(g: &mut Globals, ptr_ref_par: &mut *mut Record) {
    if !g.ptr_glob.is_null() {
        // SAFETY: ptr_glob is a live record.
        *ptr_ref_par = unsafe { (*g.ptr_glob).ptr_comp };
    }
    let int_glob = g.int_glob;
    // SAFETY: as above.
    proc_7(10, int_glob, unsafe { &mut (*g.ptr_glob).int_comp });
}

#[inline]
fn proc_4(g: &mut Globals) {
    let bool_loc = g.ch_1_glob == b'A';
    g.bool_glob |= bool_loc;
    g.ch_2_glob = b'B';
}

#[inline]
fn proc_5(g: &mut Globals) {
    g.ch_1_glob = b'A';
    g.bool_glob = false;
}

#[inline(never)]
fn proc_6(g: &mut Globals, enum_val_par: Enumeration, enum_ref_par: &mut Enumeration) {
    *enum_ref_par = enum_val_par;
    if !func_3(enum_val_par) {
        *enum_ref_par = Ident4;
    }
    *enum_ref_par = match enum_val_par {
        Ident1 => Ident1,
        Ident2 => {
            if g.int_glob > 100 {
                Ident1
            } else {
                Ident4
            }
        }
        Ident3 => Ident2,
        Ident4 => *enum_ref_par,
        Ident5 => Ident3,
    };
}

#[inline(never)]
fn proc_7(int_1_par_val: i32, int_2_par_val: i32, int_par_ref: &mut i32) {
    let int_loc = int_1_par_val + 2;
    *int_par_ref = int_2_par_val + int_loc;
}

#[inline(never)]
#[allow(clippy::needless_range_loop)] // Dhrystone's loop, index by index
fn proc_8(
    arr_1: &mut [i32; 50],
    arr_2: &mut [[i32; 50]; 50],
    int_1_par_val: i32,
    int_2_par_val: i32,
    int_glob: &mut i32,
) {
    let int_loc = int_1_par_val as usize + 5;
    arr_1[int_loc] = int_2_par_val;
    arr_1[int_loc + 1] = arr_1[int_loc];
    arr_1[int_loc + 30] = int_loc as i32;
    for int_index in int_loc..=int_loc + 1 {
        arr_2[int_loc][int_index] = int_loc as i32;
    }
    arr_2[int_loc][int_loc - 1] += 1;
    arr_2[int_loc + 20][int_loc] = arr_1[int_loc];
    *int_glob = 5;
}

#[inline(always)]
fn func_1_body(g: &mut Globals, ch_1_par_val: u8, ch_2_par_val: u8) -> Enumeration {
    let ch_1_loc = ch_1_par_val;
    let ch_2_loc = ch_1_loc;
    if ch_2_loc != ch_2_par_val {
        Ident1
    } else {
        g.ch_1_glob = ch_1_loc;
        Ident2
    }
}

#[inline(never)]
fn func_1(g: &mut Globals, ch_1_par_val: u8, ch_2_par_val: u8) -> Enumeration {
    func_1_body(g, ch_1_par_val, ch_2_par_val)
}

#[inline(never)]
fn func_2(g: &mut Globals, str_1_par_ref: &Str30, str_2_par_ref: &Str30) -> bool {
    let mut int_loc = 2usize;
    let mut ch_loc = 0u8;
    while int_loc <= 2 {
        if func_1_body(g, str_1_par_ref[int_loc], str_2_par_ref[int_loc + 1]) == Ident1 {
            ch_loc = b'A';
            int_loc += 1;
        }
    }
    if (b'W'..b'Z').contains(&ch_loc) {
        int_loc = 7;
    }
    if ch_loc == b'R' {
        return true;
    }
    // SAFETY: both strings are NUL-terminated 31-byte arrays.
    let order =
        unsafe { libc::strcmp(str_1_par_ref.as_ptr().cast(), str_2_par_ref.as_ptr().cast()) };
    if order > 0 {
        int_loc += 7;
        g.int_glob = int_loc as i32;
        true
    } else {
        false
    }
}

#[inline(never)]
fn func_3(enum_par_val: Enumeration) -> bool {
    enum_par_val == Ident3
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The final values Dhrystone 2.1 documents for a correct run.
    #[test]
    fn passes_leave_the_documented_state() {
        let runs = 1000;
        let (run_index, g, records) = run_until(|i| i > runs);
        assert_eq!(run_index, runs + 1);
        assert_eq!(g.int_glob, 5);
        assert!(g.bool_glob);
        assert_eq!((g.ch_1_glob, g.ch_2_glob), (b'A', b'B'));
        assert_eq!(g.arr_1_glob[8], 7);
        assert_eq!(g.arr_2_glob[8][7], runs as i32 + 10);
        let (next, glob) = (&records[0], &records[1]);
        assert_eq!(
            (glob.discr, glob.enum_comp, glob.int_comp),
            (Ident1, Ident3, 17)
        );
        assert_eq!(&glob.str_comp[..30], b"DHRYSTONE PROGRAM, SOME STRING");
        assert_eq!(
            (next.discr, next.enum_comp, next.int_comp),
            (Ident1, Ident2, 18)
        );
        assert_eq!(next.ptr_comp, glob.ptr_comp);
    }
}

//! Issue 3 item 7: bad input — NaN/∞ in `x` or `y`, a wrong dimension, `ν ≤ 0`, more
//! candidates than capacity, short buffers — is an `Error`, never a panic, and a rejected
//! call leaves the learner exactly as it was.

use kestrel_core::slkl::{Candidates, Dims, Params, Slkl, SlklWindow, Stats};
use kestrel_core::{Error, Kernel, Real};
use kestrel_tests::sinc_task;

use super::learner;

/// Everything observable about a learner's state.
#[derive(Debug, PartialEq)]
struct Snapshot<T> {
    objective: T,
    active: Vec<usize>,
    weights: Vec<T>,
    factor: Vec<T>,
    stats: Stats,
}

fn snapshot<T: Real>(s: &Slkl<'_, T, Vec<T>, Vec<usize>>) -> Snapshot<T> {
    Snapshot {
        objective: s.objective(),
        active: s.active().to_vec(),
        weights: (0..s.candidates_len()).map(|m| s.weight(m).unwrap()).collect(),
        factor: s.factor_packed().to_vec(),
        stats: s.stats(),
    }
}

/// A window's samples (oldest first), weights and packed factor.
type WindowSnapshot<T> = (Vec<(Vec<T>, T)>, Vec<T>, Vec<T>);

fn window_snapshot<T: Real>(w: &SlklWindow<T, Vec<T>, Vec<usize>>) -> WindowSnapshot<T> {
    let samples = (0..w.len())
        .map(|a| {
            let (x, y) = w.sample(a).unwrap();
            (x.to_vec(), y)
        })
        .collect();
    let weights = (0..).map_while(|m| w.weight(m)).collect();
    (samples, weights, w.factor_packed().to_vec())
}

fn construction_errors<T: Real>() {
    let task = sinc_task::<T>(1, 30, 0);
    let dims = Dims::new(30, 2, 10, 10);
    let params = Params::new().check().unwrap();
    let build = |x: &[T], y: &[T], dims: Dims, candidates: Candidates<'_, T>| {
        Slkl::new_in(
            vec![T::ZERO; Slkl::scalars_len(dims)],
            vec![0; Slkl::indices_len(dims)],
            dims,
            params,
            x,
            y,
            candidates,
        )
        .err()
    };
    let nan = T::from_f64(f64::NAN);
    let inf = T::from_f64(f64::INFINITY);
    let (mut x, mut y) = (task.x.clone(), task.y.clone());
    x[7] = nan;
    assert_eq!(build(&x, &task.y, dims, Candidates::Random), Some(Error::NonFinite));
    y[3] = inf;
    assert_eq!(build(&task.x, &y, dims, Candidates::Random), Some(Error::NonFinite));
    assert_eq!(
        build(&task.x[..59], &task.y, dims, Candidates::Random),
        Some(Error::DimensionMismatch { expected: 60, got: 59 })
    );
    assert_eq!(
        build(&task.x[..0], &task.y[..0], dims, Candidates::Random),
        Some(Error::InvalidParam { name: "samples" })
    );
    let small = Dims::new(20, 2, 10, 10);
    assert_eq!(
        build(&task.x, &task.y, small, Candidates::Random),
        Some(Error::CapacityExceeded { needed: 30, capacity: 20 })
    );
    let eleven: Vec<usize> = (0..11).collect();
    assert_eq!(
        build(&task.x, &task.y, dims, Candidates::Indices(&eleven)),
        Some(Error::CapacityExceeded { needed: 11, capacity: 10 })
    );
    assert_eq!(
        build(&task.x, &task.y, dims, Candidates::Points(&task.x[..22])),
        Some(Error::CapacityExceeded { needed: 11, capacity: 10 })
    );
    assert_eq!(
        build(&task.x, &task.y, dims, Candidates::Indices(&[0, 30])),
        Some(Error::IndexOutOfRange { index: 30, len: 30 })
    );
    assert!(matches!(
        build(&task.x, &task.y, dims, Candidates::Points(&task.x[..3])),
        Some(Error::DimensionMismatch { .. })
    ));
    let mut points = task.x[..4].to_vec();
    points[1] = inf;
    assert_eq!(build(&task.x, &task.y, dims, Candidates::Points(&points)), Some(Error::NonFinite));
    assert_eq!(
        build(&task.x, &task.y, dims, Candidates::Indices(&[])),
        Some(Error::InvalidParam { name: "candidates" })
    );
    assert_eq!(
        build(&task.x, &task.y, Dims::new(30, 0, 10, 10), Candidates::Random),
        Some(Error::InvalidParam { name: "dim" })
    );
    // Short buffers.
    let short = Slkl::new_in(
        vec![T::ZERO; Slkl::scalars_len(dims) - 1],
        vec![0; Slkl::indices_len(dims)],
        dims,
        params,
        &task.x,
        &task.y,
        Candidates::Random,
    );
    assert!(matches!(short.err(), Some(Error::CapacityExceeded { .. })));
    let short = Slkl::new_in(
        vec![T::ZERO; Slkl::scalars_len(dims)],
        vec![0; Slkl::indices_len(dims) - 1],
        dims,
        params,
        &task.x,
        &task.y,
        Candidates::Random,
    );
    assert!(matches!(short.err(), Some(Error::CapacityExceeded { .. })));
    let huge = Dims::new(usize::MAX / 2, 2, usize::MAX / 2, usize::MAX / 2);
    assert_eq!(Slkl::scalars_len(huge), usize::MAX);
    let r = Slkl::new_in(vec![T::ZERO; 100], vec![0; 100], huge, params, &task.x, &task.y, Candidates::Random);
    assert!(matches!(r.err(), Some(Error::CapacityExceeded { .. })));
    // Parameters.
    for nu in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(Params::<T>::new().nu(T::from_f64(nu)).check().err(), Some(Error::InvalidParam { name: "nu" }));
    }
    let lagged = Params::new().lag(11).check().unwrap();
    let r = Slkl::new_in(
        vec![T::ZERO; Slkl::scalars_len(dims)],
        vec![0; Slkl::indices_len(dims)],
        dims,
        lagged,
        &task.x,
        &task.y,
        Candidates::Random,
    );
    assert_eq!(r.err(), Some(Error::InvalidParam { name: "lag" }));
}

fn rejected_calls_leave_the_learner_unchanged<T: Real>() {
    let task = sinc_task::<T>(2, 40, 0);
    let dims = Dims::new(40, 2, 20, 3);
    let params = Params::new().nu(T::from_f64(1e-4)).check().unwrap();
    let mut slkl = learner(&task, dims, params, Candidates::Random);
    for _ in 0..200 {
        slkl.step().unwrap();
    }
    assert_eq!(slkl.active_len(), 3, "the capacity of 3 is reached");
    assert!(slkl.stats().at_capacity > 0);
    let before = snapshot(&slkl);
    let nan = T::from_f64(f64::NAN);
    let inactive = (0..20).find(|&m| slkl.weight(m) == Some(T::ZERO)).unwrap();
    assert_eq!(slkl.set_weight(20, T::ONE), Err(Error::IndexOutOfRange { index: 20, len: 20 }));
    assert_eq!(slkl.set_weight(0, nan), Err(Error::NonFinite));
    assert_eq!(slkl.set_weight(0, -T::ONE), Err(Error::InvalidParam { name: "mu" }));
    assert_eq!(slkl.set_weight(inactive, T::ONE), Err(Error::CapacityExceeded { needed: 4, capacity: 3 }));
    assert_eq!(slkl.derivatives(20).err(), Some(Error::IndexOutOfRange { index: 20, len: 20 }));
    assert_eq!(slkl.predict(&[nan, T::ONE]), Err(Error::NonFinite));
    assert_eq!(slkl.predict(&[T::ONE]), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
    assert!(matches!(slkl.predictor_in(vec![T::ZERO; 8]).err(), Some(Error::CapacityExceeded { .. })));
    assert_eq!(slkl.weight(20), None);
    assert_eq!(slkl.centre(20), None);
    assert_eq!(snapshot(&slkl), before);
}

fn window_errors<T: Real>() {
    let dims = Dims::new(8, 2, 4, 4);
    let params = Params::new().nu(T::from_f64(1e-3)).check().unwrap();
    let centres: Vec<T> = [0.0, 0.0, 1.0, 1.0, -1.0, 2.0].iter().map(|&v| T::from_f64(v)).collect();
    let new = |centres: &[T], params| {
        SlklWindow::new_in(
            vec![T::ZERO; SlklWindow::scalars_len(dims)],
            vec![0; SlklWindow::indices_len(dims)],
            dims,
            params,
            centres,
        )
    };
    let mut five = centres.clone();
    five.extend_from_slice(&centres[..4]);
    assert_eq!(new(&five, params).err(), Some(Error::CapacityExceeded { needed: 5, capacity: 4 }));
    assert!(matches!(new(&centres[..5], params).err(), Some(Error::DimensionMismatch { .. })));
    let mut bad = centres.clone();
    bad[2] = T::from_f64(f64::NAN);
    assert_eq!(new(&bad, params).err(), Some(Error::NonFinite));
    assert_eq!(new(&[], params).err(), Some(Error::InvalidParam { name: "candidates" }));
    let short = SlklWindow::new_in(
        vec![T::ZERO; Slkl::scalars_len(dims)],
        vec![0; Slkl::indices_len(dims)],
        dims,
        params,
        &centres,
    );
    assert!(matches!(short.err(), Some(Error::CapacityExceeded { .. })));

    let mut window = new(&centres, params).unwrap();
    for t in 0..20 {
        let x = [T::from_f64(t as f64 * 0.1), T::from_f64(1.0 - t as f64 * 0.05)];
        window.push(&x, T::from_f64((t as f64).sin())).unwrap();
        window.step().unwrap();
    }
    let before = window_snapshot(&window);
    let objective = window.objective().unwrap();
    let nan = T::from_f64(f64::NAN);
    assert_eq!(window.push(&[nan, T::ONE], T::ONE), Err(Error::NonFinite));
    assert_eq!(window.push(&[T::ONE, T::ONE], T::from_f64(f64::NEG_INFINITY)), Err(Error::NonFinite));
    assert_eq!(window.push(&[T::ONE], T::ONE), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
    // A finite target whose square, summed over the window, would overflow (found by
    // fuzzing: the push was taken and the steps after it failed).
    let largest = (T::MAX / T::from_f64(4.0 * 8.0)).sqrt();
    assert_eq!(window.push(&[T::ONE, T::ONE], largest * T::from_f64(1.01)), Err(Error::NonFinite));
    assert_eq!(window.push(&[T::ONE, T::ONE], -T::MAX), Err(Error::NonFinite));
    assert_eq!(window.derivatives(4).err(), Some(Error::IndexOutOfRange { index: 4, len: 3 }));
    assert_eq!(window.predict(&[T::ONE, nan]), Err(Error::NonFinite));
    assert_eq!(window_snapshot(&window), before);
    assert_eq!(window.objective().unwrap(), objective);
    assert_eq!(window.len(), 8);

    // A kernel value that overflows is rejected too (the polynomial kernel of a huge x).
    let poly = Params::new().kernel(Kernel::polynomial(8, T::ONE, T::ONE).unwrap()).check().unwrap();
    let mut window = new(&centres, poly).unwrap();
    let huge = T::from_f64(1e30);
    assert_eq!(window.push(&[huge, huge], T::ONE), Err(Error::NonFinite));
    assert!(window.is_empty());
}

macro_rules! gen_tests {
    ($($module:ident: $t:ty,)*) => {$(
        mod $module {
            use super::*;

            #[test]
            fn construction_rejects_bad_input() {
                construction_errors::<$t>();
            }

            #[test]
            fn rejected_calls_leave_the_batch_learner_unchanged() {
                rejected_calls_leave_the_learner_unchanged::<$t>();
            }

            #[test]
            fn window_rejects_bad_input_and_stays_unchanged() {
                window_errors::<$t>();
            }
        }
    )*};
}

gen_tests! {
    f32_tests: f32,
    f64_tests: f64,
}

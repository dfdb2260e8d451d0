//! The sliding window against a batch learner built from scratch on the same window's
//! samples, with the same weights: same factor of `D⁻¹ + CᵀC/λ`, same `F`, same
//! derivatives, same predictions; and both against the dense reference. Checked while the
//! window fills and after hundreds of evictions, for both column modes.

use kestrel_core::slkl::{Candidates, ColumnMode, Dims, Params, SlklWindow, ValidParams};
use kestrel_core::{Real, Rng};
use kestrel_tests::{DenseSlkl, Regression, relative_error, sinc, sinc_task};

use super::{factor_of, learner};

const N: usize = 80;
const M: usize = 24;

type Window<T> = SlklWindow<T, Vec<T>, Vec<usize>>;

fn tolerance<T: Real>() -> f64 {
    2e4 * T::EPSILON.to_f64()
}

/// The window's samples as a batch task, oldest first.
fn window_task<T: Real>(window: &Window<T>) -> Regression<T> {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for age in 0..window.len() {
        let (xi, yi) = window.sample(age).unwrap();
        x.extend_from_slice(xi);
        y.push(yi);
    }
    Regression { x, y, x_test: Vec::new(), y_test: Vec::new(), dim: 2 }
}

fn compare<T: Real>(window: &mut Window<T>, centres: &[T], params: ValidParams<T>, mode: ColumnMode) {
    let tol = tolerance::<T>();
    let task = window_task(window);
    let n = task.y.len();
    let dims = Dims::new(n, 2, M, M).columns(mode);
    let mut batch = learner(&task, dims, params, Candidates::Points(centres));
    let active = window.active().to_vec();
    for &j in &active {
        batch.set_weight(j, window.weight(j).unwrap()).unwrap();
    }
    assert_eq!(batch.active(), &active[..]);
    let k = active.len();
    let (window_llt, _) = factor_of(window.factor_packed(), k);
    let (batch_llt, _) = factor_of(batch.factor_packed(), k);
    let dense =
        DenseSlkl::new(&params.kernel(), &task.x, &task.y, 2, centres, params.lambda().to_f64(), params.nu().to_f64());
    let mu: Vec<f64> = (0..M).map(|m| window.weight(m).unwrap().to_f64()).collect();
    let h = dense.h_matrix(&mu, &active);
    if k > 0 {
        assert!(relative_error(&window_llt, &batch_llt) <= tol, "window vs batch factor");
        assert!(relative_error(&window_llt, &h) <= tol, "window factor vs dense H");
    }
    let f = dense.objective(&mu);
    let (fw, fb) = (window.objective().unwrap().to_f64(), batch.objective().to_f64());
    assert!((fw - f).abs() <= tol * f && (fb - f).abs() <= tol * f, "F {fw} {fb} {f}");
    for (m, &(a, _)) in dense.coordinates(&mu).iter().enumerate() {
        let (gw, hw) = window.derivatives(m).unwrap();
        let (gb, hb) = batch.derivatives(m).unwrap();
        let scale = dense.nu + dense.lambda * a * a;
        assert!((gw.to_f64() - gb.to_f64()).abs() <= tol * scale, "∂F {m}: {gw} {gb}");
        assert!((hw.to_f64() - hb.to_f64()).abs() <= tol * (hb.to_f64().abs() + scale), "∂²F {m}");
    }
    for p in [[0.5, -1.0], [3.0, 2.0], [-4.0, 0.0]] {
        let x = [T::from_f64(p[0]), T::from_f64(p[1])];
        let (pw, pb) = (window.predict(&x).unwrap(), batch.predict(&x).unwrap());
        assert!((pw.to_f64() - pb.to_f64()).abs() <= tol, "predict {pw} {pb}");
    }
}

fn window_equals_batch<T: Real>(mode: ColumnMode) {
    let stream = sinc_task::<T>(17, 400, 0);
    let mut rng = Rng::seed_from_u64(23);
    let centres: Vec<T> = (0..2 * M).map(|_| rng.uniform_in(T::from_f64(-5.0), T::from_f64(5.0))).collect();
    let params = Params::new().nu(T::from_f64(0.01)).seed(3).check().unwrap();
    let dims = Dims::new(N, 2, M, M).columns(mode);
    let mut window: Window<T> = SlklWindow::new_in(
        vec![T::ZERO; SlklWindow::scalars_len(dims)],
        vec![0; SlklWindow::indices_len(dims)],
        dims,
        params,
        &centres,
    )
    .unwrap();
    for (t, (x, &y)) in stream.x.chunks(2).zip(&stream.y).enumerate() {
        window.push(x, y).unwrap();
        for _ in 0..5 {
            window.step().unwrap();
        }
        if t == 50 {
            assert!(!window.is_full());
            compare(&mut window, &centres, params, mode);
        }
    }
    assert!(window.is_full() && window.active_len() > 3);
    compare(&mut window, &centres, params, mode);
    // The window tracks the stream: after a run it explains most of the variance of the
    // clean function on its latest samples.
    window.run().unwrap();
    let (mut err, mut clean) = (0.0, Vec::new());
    for age in 0..N {
        let x = window.sample(age).unwrap().0.to_vec();
        let truth = sinc(&x.iter().map(|v| v.to_f64()).collect::<Vec<_>>());
        err += (window.predict(&x).unwrap().to_f64() - truth).powi(2) / N as f64;
        clean.push(truth);
    }
    let mean = clean.iter().sum::<f64>() / N as f64;
    let variance = clean.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / N as f64;
    eprintln!("window fit MSE {err:.5}, variance {variance:.5}, m0 {}", window.active_len());
    assert!(err < 0.5 * variance, "window fit MSE {err}, variance {variance}");
    compare(&mut window, &centres, params, mode);
}

macro_rules! gen_tests {
    ($($module:ident: $t:ty,)*) => {$(
        mod $module {
            use super::*;

            #[test]
            fn window_equals_batch_on_the_fly() {
                window_equals_batch::<$t>(ColumnMode::OnTheFly);
            }

            #[test]
            fn window_equals_batch_precomputed() {
                window_equals_batch::<$t>(ColumnMode::Precomputed);
            }
        }
    )*};
}

gen_tests! {
    f32_tests: f32,
    f64_tests: f64,
}

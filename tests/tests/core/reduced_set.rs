//! IRSVM and streaming reduced-set selection against dense least-squares references.

use kestrel_core::cholesky::Cholesky;
use kestrel_core::linalg::dot;
use kestrel_core::reduced_set::{Irsvm, IrsvmParams, Offer, SelectionStop, StreamingSelector, select_random};
use kestrel_core::{Error, Kernel, Real, Rng};
use kestrel_tests::{gram_matrix, reconstruct, relative_error, uniform_points};
use nalgebra::{DMatrix, DVector};

const N: usize = 300;
const DIM: usize = 2;
const CAPACITY: usize = 40;

/// Distance of `k` to the column space of `basis` (least squares by SVD, f64).
fn distance_to_span(basis: &DMatrix<f64>, k: &DVector<f64>) -> f64 {
    if basis.ncols() == 0 {
        return k.norm();
    }
    let beta = basis.clone().svd(true, true).solve(k, 1e-12).unwrap();
    (basis * beta - k).norm()
}

/// IRSVM on `points` (`DIM` columns) with storage for `capacity` centres.
fn irsvm<T: Real>(
    points: &[T],
    kernel: &Kernel<T>,
    capacity: usize,
    params: IrsvmParams<T>,
    rng: &mut Rng,
) -> Irsvm<T, Vec<T>, Vec<T>, Vec<usize>> {
    let n = points.len() / DIM;
    Irsvm::select_in(
        vec![T::ZERO; Irsvm::scalars_len(n, capacity)],
        Cholesky::new_in(vec![T::ZERO; Cholesky::scalars_len(capacity)], capacity).unwrap(),
        vec![0usize; Irsvm::indices_len(n, capacity)],
        points,
        DIM,
        kernel,
        params.check().unwrap(),
        rng,
    )
    .unwrap()
}

fn irsvm_matches_least_squares<T: Real>() {
    let mut rng = Rng::seed_from_u64(8);
    let points = uniform_points::<T>(&mut rng, N, DIM);
    let kernel = Kernel::rbf(T::from_f64(3.0)).unwrap();
    let delta = 0.05 * (N as f64).sqrt();
    let selection =
        irsvm(&points, &kernel, CAPACITY, IrsvmParams::new(T::from_f64(delta)).max_rejections(30), &mut rng);
    let m = selection.len();
    assert!(m > 5 && m <= CAPACITY, "m = {m}");
    assert_ne!(selection.stop(), SelectionStop::Exhausted);

    let gram = gram_matrix(&kernel, &points, DIM);
    let chosen = selection.indices();
    let reduced = DMatrix::from_fn(N, m, |i, t| gram[(i, chosen[t])]);
    let features = DMatrix::from_fn(N, m, |i, t| selection.features(i).unwrap()[t].to_f64());
    let tol = 1e3 * T::EPSILON.to_f64();
    assert!(relative_error(&features, &reduced) < tol, "features are K(A, Ã)");
    assert!(relative_error(&reconstruct(selection.factor()), &(reduced.transpose() * &reduced)) < tol);
    // Every point after the initial two joined at distance ≥ δ from the span before it.
    for t in 2..m {
        let r = distance_to_span(&reduced.columns(0, t).into_owned(), &reduced.column(t).into_owned());
        assert!(r >= delta * (1.0 - 1e2 * tol), "point {t} joined at r = {r} < δ = {delta}");
    }
    // And every point left out is either within δ of the final span or was never tried.
    let below = (0..N)
        .filter(|i| !chosen.contains(i))
        .filter(|&i| distance_to_span(&reduced, &gram.column(i).into_owned()) < delta)
        .count();
    assert!(below > N / 2, "most points are explained by the reduced set ({below} of {})", N - m);
}

/// Algorithm 1 one candidate at a time, as the paper writes it: each candidate's
/// projection `K̃ᵀk` summed over the rows in their order, appended to the factor and kept
/// when `r² ≥ δ²` (any `r` among the first `initial`), until `max_rejections` in a row or
/// the capacity. The chosen rows and their kernel columns.
fn one_at_a_time<T: Real>(
    points: &[T],
    kernel: &Kernel<T>,
    params: (T, usize, usize),
    capacity: usize,
    rng: &mut Rng,
) -> (Vec<usize>, Vec<Vec<T>>) {
    let (delta, initial, max_rejections) = params;
    let mut order: Vec<usize> = (0..points.len() / DIM).collect();
    rng.shuffle(&mut order);
    let mut factor = Cholesky::new_in(vec![T::ZERO; Cholesky::scalars_len(capacity)], capacity).unwrap();
    let (mut chosen, mut columns, mut rejections) = (Vec::new(), Vec::<Vec<T>>::new(), 0);
    for candidate in order {
        if chosen.len() == capacity {
            break;
        }
        let x = &points[candidate * DIM..(candidate + 1) * DIM];
        let column: Vec<T> = points.chunks_exact(DIM).map(|p| kernel.eval(x, p).unwrap()).collect();
        let mut projection: Vec<T> =
            columns.iter().map(|z| column.iter().zip(z).fold(T::ZERO, |sum, (&c, &zi)| sum + c * zi)).collect();
        projection.push(dot(&column, &column).unwrap());
        let m = chosen.len();
        let threshold = if m < initial { T::ZERO } else { delta * delta };
        let mut joined = factor.append_column(&projection).is_ok();
        if joined && factor.row(m).unwrap()[m] * factor.row(m).unwrap()[m] < threshold {
            factor.remove_column(m).unwrap();
            joined = false;
        }
        if joined {
            (rejections, chosen, columns) = (0, [chosen, vec![candidate]].concat(), [columns, vec![column]].concat());
        } else if m >= initial {
            rejections += 1;
            if rejections == max_rejections {
                break;
            }
        }
    }
    (chosen, columns)
}

/// Candidates are projected in batches; the selection is the one-at-a-time algorithm's,
/// bit for bit: through rejections inside a batch, centres joining earlier in the same
/// batch, a capacity reached inside a batch, and a set whose size is not a multiple of
/// the batch.
fn batches_select_as_one_at_a_time<T: Real>() {
    let n = 301;
    let points = uniform_points::<T>(&mut Rng::seed_from_u64(10), n, DIM);
    let kernel = Kernel::rbf(T::from_f64(3.0)).unwrap();
    let root_n = (n as f64).sqrt();
    for (rms, initial, max_rejections, capacity, stop) in [
        (0.05, 2, 30, 40, SelectionStop::Rejections),
        (0.02, 3, 1000, 7, SelectionStop::Capacity),
        (0.2, 2, 1000, 40, SelectionStop::Exhausted),
        (1e-6, 2, 5, 13, SelectionStop::Capacity),
    ] {
        let params = (T::from_f64(rms * root_n), initial, max_rejections);
        let irsvm_params = IrsvmParams::new(params.0).initial(initial).max_rejections(max_rejections);
        let selection = irsvm(&points, &kernel, capacity, irsvm_params, &mut Rng::seed_from_u64(4));
        let (chosen, columns) = one_at_a_time(&points, &kernel, params, capacity, &mut Rng::seed_from_u64(4));
        assert_eq!((selection.indices(), selection.stop()), (&chosen[..], stop), "rms {rms}");
        for (i, _) in points.chunks_exact(DIM).enumerate() {
            let row: Vec<T> = columns.iter().map(|column| column[i]).collect();
            assert_eq!(selection.features(i).unwrap(), &row[..], "rms {rms}, row {i}");
        }
    }
}

fn streaming_matches_feature_space_distance<T: Real>() {
    let mut rng = Rng::seed_from_u64(9);
    let points = uniform_points::<T>(&mut rng, N, DIM);
    let kernel = Kernel::rbf(T::from_f64(3.0)).unwrap();
    let delta = 0.3;
    let mut selector = StreamingSelector::new_in(
        vec![T::ZERO; StreamingSelector::scalars_len(CAPACITY, DIM)],
        Cholesky::new_in(vec![T::ZERO; Cholesky::scalars_len(CAPACITY)], CAPACITY).unwrap(),
        kernel,
        DIM,
        T::from_f64(delta),
    )
    .unwrap();
    let mut centres: Vec<usize> = Vec::new();
    let gram = gram_matrix(&kernel, &points, DIM);
    let tol = 1e3 * T::EPSILON.to_f64();
    for i in 0..N {
        let offer = selector.offer(&points[i * DIM..(i + 1) * DIM]).unwrap();
        let k_cc = DMatrix::from_fn(centres.len(), centres.len(), |a, b| gram[(centres[a], centres[b])]);
        let k = DVector::from_fn(centres.len(), |a, _| gram[(centres[a], i)]);
        let d2 = if centres.is_empty() { 1.0 } else { 1.0 - k.dot(&k_cc.cholesky().unwrap().solve(&k)) };
        let d = d2.max(0.0).sqrt();
        match offer {
            Offer::Accepted { index, distance } => {
                assert_eq!(index, centres.len());
                assert!((distance.to_f64() - d).abs() < tol.sqrt(), "{} vs {d}", distance.to_f64());
                assert!(d >= delta * (1.0 - tol.sqrt()));
                centres.push(i);
            }
            Offer::Rejected { distance } => {
                assert!((distance.to_f64() - d).abs() < tol.sqrt());
                assert!(d < delta * (1.0 + tol.sqrt()));
            }
            Offer::Full => assert_eq!(centres.len(), CAPACITY),
        }
    }
    assert!(centres.len() > 5);
    let k_cc = DMatrix::from_fn(centres.len(), centres.len(), |a, b| gram[(centres[a], centres[b])]);
    assert!(relative_error(&reconstruct(selector.factor()), &k_cc) < tol);
    for (j, &c) in centres.iter().enumerate() {
        assert_eq!(selector.centre(j).unwrap(), &points[c * DIM..(c + 1) * DIM]);
    }
}

fn bad_input_leaves_the_selector_unchanged<T: Real>() {
    let kernel = Kernel::rbf(T::ONE).unwrap();
    let factor = || Cholesky::new_in(vec![T::ZERO; Cholesky::scalars_len(4)], 4).unwrap();
    let mut selector = StreamingSelector::new_in(
        vec![T::ZERO; StreamingSelector::scalars_len(4, 2)],
        factor(),
        kernel,
        2,
        T::from_f64(0.1),
    )
    .unwrap();
    selector.offer(&[T::ZERO, T::ONE]).unwrap();
    let before = selector.factor().packed().to_vec();
    let nan = T::from_f64(f64::NAN);
    assert_eq!(selector.offer(&[nan, T::ONE]), Err(Error::NonFinite));
    assert_eq!(selector.offer(&[T::ONE]), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
    assert_eq!((selector.len(), selector.factor().packed()), (1, &before[..]));
    // Under a linear kernel a point near the scalar's range has no k(x, x): an error, not a
    // point too near the centres.
    let mut linear = StreamingSelector::new_in(
        vec![T::ZERO; StreamingSelector::scalars_len(4, 2)],
        factor(),
        Kernel::linear(),
        2,
        T::from_f64(0.1),
    )
    .unwrap();
    linear.offer(&[T::ONE, T::ZERO]).unwrap();
    let huge = T::MAX.sqrt() * T::from_f64(2.0);
    assert_eq!(linear.offer(&[T::ZERO, huge]), Err(Error::NonFinite));
    assert_eq!(linear.len(), 1);
    // A full selector examines no column, but still refuses such a point.
    let one = Cholesky::new_in(vec![T::ZERO; Cholesky::scalars_len(1)], 1).unwrap();
    let scalars = vec![T::ZERO; StreamingSelector::scalars_len(1, 2)];
    let mut full = StreamingSelector::new_in(scalars, one, Kernel::linear(), 2, T::from_f64(0.1)).unwrap();
    full.offer(&[T::ONE, T::ZERO]).unwrap();
    assert!(matches!(full.offer(&[T::ZERO, T::ONE]), Ok(Offer::Full)));
    assert_eq!(full.offer(&[T::ZERO, huge]), Err(Error::NonFinite));
    let short = vec![T::ZERO; StreamingSelector::scalars_len(4, 2) - 1];
    assert!(matches!(
        StreamingSelector::new_in(short, factor(), kernel, 2, T::ONE),
        Err(Error::CapacityExceeded { .. })
    ));
    let bad_delta = StreamingSelector::new_in(vec![T::ZERO; 20], factor(), kernel, 2, T::ZERO);
    assert_eq!(bad_delta.err(), Some(Error::InvalidParam { name: "delta" }));

    let points = [T::ZERO, T::ONE, nan, T::ONE];
    let select = |points: &[T], params: IrsvmParams<T>| {
        Irsvm::select_in(
            vec![T::ZERO; Irsvm::scalars_len(2, 4)],
            factor(),
            vec![0usize; Irsvm::indices_len(2, 4)],
            points,
            2,
            &kernel,
            params.check()?,
            &mut Rng::seed_from_u64(1),
        )
        .map(|s| s.len())
    };
    let params = IrsvmParams::new(T::ONE);
    assert_eq!(select(&points, params), Err(Error::NonFinite));
    assert_eq!(select(&points[..3], params), Err(Error::DimensionMismatch { expected: 4, got: 3 }));
    assert_eq!(select(&points[..2], IrsvmParams::new(-T::ONE)), Err(Error::InvalidParam { name: "delta" }));
    assert_eq!(select(&points[..2], params.initial(5)), Err(Error::CapacityExceeded { needed: 5, capacity: 4 }));
    assert_eq!(select(&points[..2], params), Ok(1));
}

macro_rules! reduced_set_tests {
    ($($t:ident),*) => {$(
        mod $t {
            #[test]
            fn irsvm_matches_least_squares() {
                super::irsvm_matches_least_squares::<$t>();
            }
            #[test]
            fn batches_select_as_one_at_a_time() {
                super::batches_select_as_one_at_a_time::<$t>();
            }
            #[test]
            fn streaming_matches_feature_space_distance() {
                super::streaming_matches_feature_space_distance::<$t>();
            }
            #[test]
            fn bad_input_leaves_the_selector_unchanged() {
                super::bad_input_leaves_the_selector_unchanged::<$t>();
            }
        }
    )*};
}

reduced_set_tests!(f64, f32);

#[test]
fn random_reduced_set_is_a_subset() {
    let mut chosen = [0usize; 64];
    select_random(1000, &mut Rng::seed_from_u64(2), &mut chosen).unwrap();
    let mut sorted = chosen.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 64);
    assert!(sorted.iter().all(|&i| i < 1000));
}

//! Heapsort of pairs of `u32` kept side by side in one slice: `O(m log m)`, no memory,
//! no recursion (the pair lists of [`Constraints`](super::Constraints) are sorted in
//! their own storage).

/// Sorts the `items.len() / 2` pairs `(items[2p], items[2p+1])` by `key(first, second)`.
pub(super) fn sort_pairs(items: &mut [u32], key: impl Fn(u32, u32) -> u64) {
    let m = items.len() / 2;
    let at = |items: &[u32], p: usize| key(items[2 * p], items[2 * p + 1]);
    let swap = |items: &mut [u32], p: usize, q: usize| {
        items.swap(2 * p, 2 * q);
        items.swap(2 * p + 1, 2 * q + 1);
    };
    let sift_down = |items: &mut [u32], mut root: usize, end: usize| loop {
        let mut child = 2 * root + 1;
        if child >= end {
            break;
        }
        if child + 1 < end && at(items, child) < at(items, child + 1) {
            child += 1;
        }
        if at(items, root) < at(items, child) {
            swap(items, root, child);
            root = child;
        } else {
            break;
        }
    };
    for start in (0..m / 2).rev() {
        sift_down(items, start, m);
    }
    for end in (1..m).rev() {
        swap(items, 0, end);
        sift_down(items, 0, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_pairs_by_key() {
        let mut rng = crate::Rng::seed_from_u64(2);
        for m in 0..40usize {
            let mut items = [0u32; 80];
            for v in items.iter_mut().take(2 * m) {
                *v = rng.below(7) as u32;
            }
            let before = items;
            sort_pairs(&mut items[..2 * m], |a, b| (u64::from(a) << 32) | u64::from(b));
            for p in 1..m {
                assert!((items[2 * p - 2], items[2 * p - 1]) <= (items[2 * p], items[2 * p + 1]));
            }
            // Same multiset of pairs.
            for p in 0..m {
                let pair = (before[2 * p], before[2 * p + 1]);
                let count = |xs: &[u32]| xs.chunks_exact(2).filter(|c| (c[0], c[1]) == pair).count();
                assert_eq!(count(&before[..2 * m]), count(&items[..2 * m]));
            }
        }
    }
}

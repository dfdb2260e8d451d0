//! Cholesky benchmarks: a placeholder until the criterion suite lands.

fn main() {}

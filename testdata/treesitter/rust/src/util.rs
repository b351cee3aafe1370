pub fn double(x: f64) -> f64 {
    x * 2.0
}

pub fn apply(double: fn(f64) -> f64) -> f64 {
    double(1.0)
}

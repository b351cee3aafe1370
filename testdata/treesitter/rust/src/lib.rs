pub mod shapes;
mod util;

pub use shapes::Circle;

pub fn unit() -> Circle {
    Circle::new(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_has_area() {
        assert!(unit().area() > 3.0);
        let c = Circle::new(2.0);
        assert_eq!(util::double(2.0), 4.0);
    }
}

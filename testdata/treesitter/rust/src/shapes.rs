use crate::util::double;
use serde::Serialize;

pub trait Shape {
    fn area(&self) -> f64;
    fn describe(&self) -> String {
        format!("{}", self.area())
    }
}

#[derive(Serialize)]
pub struct Circle {
    pub r: f64,
}

impl Circle {
    pub fn new(r: f64) -> Self {
        Circle { r }
    }
    pub fn diameter(&self) -> f64 {
        double(self.r)
    }
}

impl Shape for Circle {
    fn area(&self) -> f64 {
        3.14 * self.r * self.r
    }
}

use geo_kit::unit;

#[test]
fn unit_circle() {
    let c = unit();
    assert_eq!(c.r, 1.0);
}

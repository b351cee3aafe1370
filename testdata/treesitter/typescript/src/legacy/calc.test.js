const calc = require('./calc');

describe('calc', () => {
  it('adds', () => {
    expect(calc.add(1, 2)).toBe(3);
  });
});

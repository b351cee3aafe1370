import { Base } from './shape';

export class Square extends Base {
  constructor(private side: number) {
    super();
  }
  area(): number {
    return square(this.side);
  }
}

export function square(x: number): number {
  return x * x;
}

export const UNIT = new Square(1);

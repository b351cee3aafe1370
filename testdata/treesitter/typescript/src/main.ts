import { Square, square } from '@lib/index';
import * as shapes from './lib/shape';
import lodash from 'lodash';

function total(items: shapes.Shape[]): number {
  let sum = 0;
  for (const s of items) sum += s.area();
  return sum + square(2);
}

export default function main(): number {
  const sq = new Square(3);
  lodash.noop();
  return total([sq]);
}

export * from './square';
export { Shape } from './shape';

import { version } from '../package.json';

export const PRODUCT_VERSION: string = version;

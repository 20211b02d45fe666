export { init } from 'blockquant';

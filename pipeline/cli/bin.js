#!/usr/bin/env node
// perfmine's executable: runs the TypeScript sources directly through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
await import('./entry.ts');

import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { register as registerRequest } from './request.js';

/** `opcli api`: an authenticated raw request, like `gh api`. */
export function register(program: Command, deps: Deps): void {
  registerRequest(program, deps);
}

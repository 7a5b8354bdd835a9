/**
 * The console's script as the Worker serves it: JavaScript that parses, and that has no way
 * to turn a text into HTML or code. The browser tests (test/browser/) check what it does.
 */
import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CONSOLE_SCRIPT } from '../../src/worker/console/console-script.ts';

describe('the console script', () => {
  it('parses as a classic script', () => {
    expect(() => new Script(CONSOLE_SCRIPT, { filename: 'console.js' })).not.toThrow();
  });

  for (const sink of [
    'innerHTML',
    'outerHTML',
    'insertAdjacentHTML',
    'document.write',
    'createContextualFragment',
    'DOMParser',
    'srcdoc',
    'eval(',
    'new Function',
    "setTimeout('",
    'javascript:',
  ]) {
    it(`never uses ${sink}`, () => {
      expect(CONSOLE_SCRIPT).not.toContain(sink);
    });
  }

  it('sets attributes only through its one element helper, and never an event handler attribute', () => {
    expect(CONSOLE_SCRIPT.match(/\.setAttribute\(/g)?.length).toBeGreaterThan(0);
    expect(CONSOLE_SCRIPT).not.toMatch(/setAttribute\(\s*['"]on/i);
    expect(CONSOLE_SCRIPT).not.toMatch(/\bon[a-z]+\s*:/);
  });
});

/**
 * The command line's operator with an ask's choices and timeout: an answer outside the
 * choices is refused (a given one, and one typed at the terminal, which is asked again);
 * at the timeout the window closes, and a line typed later goes to the next ask.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { OPERATOR_WINDOW_CLOSED } from '../../src/host/operator.ts';
import { commandLineOperator } from '../../src/cli/terminal-operator.ts';
import type { CliIo } from '../../src/cli/io.ts';

function io(terminal: boolean): { io: CliIo; stdin: PassThrough; err: string[] } {
  const stdin = new PassThrough();
  const err: string[] = [];
  return { io: { out: () => {}, err: (text) => err.push(text), stdin, stdinIsTerminal: terminal, env: {} }, stdin, err };
}

describe('the command line operator', () => {
  it('takes a given answer that is one of the choices', async () => {
    const { io: cli } = io(false);
    expect(await commandLineOperator(['ship'], cli).ask({ question: 'Ship?', choices: ['ship', 'hold'] })).toEqual({ ok: true, text: 'ship' });
  });

  it('refuses a given answer outside the choices, saying so, and closes the window without a terminal', async () => {
    const { io: cli, err } = io(false);
    expect(await commandLineOperator(['maybe'], cli).ask({ question: 'Ship?', choices: ['ship', 'hold'] })).toEqual({
      ok: false,
      message: OPERATOR_WINDOW_CLOSED,
    });
    expect(err.join('')).toContain('--answer "maybe" is not one of the ask\'s choices ("ship", "hold")');
  });

  it('asks again at the terminal until a line is one of the choices', async () => {
    const { io: cli, stdin, err } = io(true);
    const operator = commandLineOperator([], cli);
    const asked = operator.ask({ question: 'Ship?', choices: ['ship', 'hold'] });
    stdin.write('maybe\nhold\n');
    expect(await asked).toEqual({ ok: true, text: 'hold' });
    expect(err.join('')).toContain('Ship? (ship / hold)');
    expect(err.join('')).toContain('Answer one of: ship, hold');
    operator.close();
  });

  it('closes the window at the timeout, and gives a line typed later to the next ask', async () => {
    const { io: cli, stdin } = io(true);
    const operator = commandLineOperator([], cli);
    expect(await operator.ask({ question: 'Quick?', timeout: 0.05 })).toEqual({ ok: false, message: OPERATOR_WINDOW_CLOSED });
    const next = operator.ask({ question: 'Next?' });
    stdin.write('late\n');
    expect(await next).toEqual({ ok: true, text: 'late' });
    operator.close();
  });
});

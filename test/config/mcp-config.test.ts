import { describe, expect, it } from 'vitest';
import { formatConfigProblem, parseDeploymentConfig } from '../../src/config/parse-config.ts';

function problems(text: string): string[] {
  const outcome = parseDeploymentConfig(text);
  if (outcome.ok) throw new Error('the file was accepted');
  return outcome.problems.map((problem) => formatConfigProblem('runvil.yaml', problem));
}

function accepted(text: string) {
  const outcome = parseDeploymentConfig(text);
  if (!outcome.ok) throw new Error(outcome.problems.map((p) => formatConfigProblem('runvil.yaml', p)).join('\n'));
  return outcome.config;
}

describe('mcp: in runvil.yaml', () => {
  it('reads the example of the design: tool name -> prompt, in file order', () => {
    const config = accepted('mcp:\n  tools:                      # MCP tool name -> prompt\n    search_tickets: ticket-search\n    greet.v2: greet\n');
    expect([...config.mcp!.tools!]).toEqual([
      ['search_tickets', 'ticket-search'],
      ['greet.v2', 'greet'],
    ]);
  });

  it('serves every prompt under its own name without mcp: or without tools:', () => {
    expect(accepted('public_url: https://a.example.com\n').mcp).toBeUndefined();
    expect(accepted('mcp: {}\n').mcp).toEqual({ tools: null });
  });

  it('names the place of a tool name MCP does not allow, and of a prompt name no prompt has', () => {
    expect(problems('mcp:\n  tools:\n    "bad name": greet\n    ok: Not_A_Prompt\n')).toEqual([
      'runvil.yaml:3:5: `mcp.tools["bad name"]`: "bad name" is not an MCP tool name (1 to 128 letters, digits, _, - and .)',
      'runvil.yaml:4:9: `mcp.tools.ok`: "Not_A_Prompt" is not a prompt name (lowercase letters, digits and \'-\')',
    ]);
  });

  it('refuses what the format does not have, at its place', () => {
    expect(problems('mcp:\n  tool: {}\n')[0]).toMatch(/^runvil\.yaml:2:3: /);
    expect(problems('mcp:\n  tools:\n    a: 3\n')[0]).toMatch(/^runvil\.yaml:3:8: /);
    expect(problems('mcp:\n  tools: {}\n')).toEqual(['runvil.yaml:2:10: `mcp.tools` is empty: leave it out to serve every prompt under its own name']);
  });
});

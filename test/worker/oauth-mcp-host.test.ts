/**
 * OAuth on /mcp with a client no one here wrote: the SDK's v2 MCP client (its OAuth
 * machinery, as MCP hosts use it) finds the authorization server from /mcp's 401, registers
 * itself, sends the person to the consent page with PKCE, redeems the code, and then lists
 * and calls the prompts its grant may run, on the real /mcp, in both protocol eras.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { call, json } from './app/client.ts';
import { GREET } from './app/prompts.ts';
import { deployedFetch, openConsent, ORIGIN, postConsent, REDIRECT_URI } from './app/oauth-client.ts';

type Era = 'modern' | 'legacy';

/** An MCP host's OAuth state, in memory: what the SDK asks it to keep. */
class HostAuth implements OAuthClientProvider {
  client: any;
  saved: any;
  verifier = '';
  /** Where the SDK sent the person to authorize, when it did. */
  authorizationUrl: URL | null = null;
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: 'SDK host',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: unknown) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: unknown) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const transportFor = (auth: HostAuth) => new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), { fetch: deployedFetch, authProvider: auth });

const clientOf = (era: Era) =>
  new Client({ name: 'oauth-host', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});

let signer: { key: string };
beforeAll(async () => {
  await json(await call('PUT', '/prompts/greet', { body: GREET }), 201);
  await json(await call('PUT', '/prompts/greet-twin', { body: GREET.replace('name: greet', 'name: greet-twin') }), 201);
  signer = await json(await call('POST', '/keys', { body: { name: 'host-signer', scopes: ['runs:read', 'runs:start:*', 'asks:answer:*'] } }), 201);
});

describe.each<Era>(['modern', 'legacy'])('the SDK as a %s MCP host', (era) => {
  const auth = new HostAuth();
  let client: Client;

  beforeAll(async () => {
    // Its first connection is refused, and the SDK sends the person to authorize.
    const first = transportFor(auth);
    await expect(clientOf(era).connect(first)).rejects.toThrow();
    expect(auth.authorizationUrl).not.toBeNull();
    const url = auth.authorizationUrl!;
    expect(`${url.origin}${url.pathname}`).toBe(`${ORIGIN}/oauth/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(`${ORIGIN}/mcp`);
    // The person signs in with a key that may start greet only, and grants that.
    const consent = await openConsent(`${url.pathname}${url.search}`);
    expect(consent.html).toContain('SDK host');
    const decided = await postConsent(consent, { key: signer.key, scope: ['runs:start:greet'] });
    expect(decided.status).toBe(302);
    await first.finishAuth(new URL(decided.headers.get('location')!).searchParams);
    expect(auth.saved.access_token).toMatch(/\S/);
    client = clientOf(era);
    await client.connect(transportFor(auth));
  });
  afterAll(async () => client?.close());

  it('lists the prompts its grant may run, and only those', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['greet']);
  });

  it('calls one and gets its result', async () => {
    const result = await client.callTool({ name: 'greet', arguments: { name: 'Ada', times: 2 } });
    expect(result.content).toEqual([{ type: 'text', text: 'hello Ada x2' }]);
  });

  it('cannot call a prompt its grant does not name, though the key that granted it could', async () => {
    await expect(client.callTool({ name: 'greet-twin', arguments: {} })).rejects.toThrow(/runs:start:greet-twin/);
  });

  it('is refused from a browser on another site with its token (DNS rebinding), as a key is', async () => {
    const response = await deployedFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${auth.saved.access_token}`,
        origin: 'https://evil.example',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(response.status).toBe(403);
  });
});

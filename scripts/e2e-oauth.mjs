/**
 * The end-to-end check's OAuth part (scripts/e2e.mjs runs it against the real local server):
 * the MCP SDK's v2 client, with its own OAuth machinery as an MCP host uses it, connects to
 * /mcp with no credential; the server's 401 leads it to the metadata, dynamic registration
 * and the consent page, which the check fills in as a person would (the page's form and
 * cookie, a key of its own that may start e2e-intake); with the code redeemed, tools/list
 * shows that prompt alone. The host's access token opens /mcp only: the REST API refuses it.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const REDIRECT_URI = 'http://127.0.0.1:9/oauth/callback';

/** An MCP host's OAuth state, in memory. */
function hostAuth() {
  const state = { client: undefined, tokens: undefined, verifier: '', authorizationUrl: null };
  return {
    held: state,
    get redirectUrl() {
      return REDIRECT_URI;
    },
    get clientMetadata() {
      return {
        client_name: 'e2e host',
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
    },
    clientInformation: () => state.client,
    saveClientInformation: (client) => void (state.client = client),
    tokens: () => state.tokens,
    saveTokens: (tokens) => void (state.tokens = tokens),
    redirectToAuthorization: (url) => void (state.authorizationUrl = url),
    saveCodeVerifier: (verifier) => void (state.verifier = verifier),
    codeVerifier: () => state.verifier,
  };
}

/** Runs the check; `api` is the root's client of the server at `base` (e2e-client.mjs). */
export async function checkOAuth({ api, base, step, check }) {
  const { key } = await api('POST', '/keys', { body: { name: 'e2e-oauth-signer', scopes: ['runs:read', 'runs:start:e2e-intake'] }, expect: 201 });
  const auth = hostAuth();
  const transport = () => new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: auth });

  const first = transport();
  const refused = await new Client({ name: 'e2e-oauth-host', version: '1.0.0' }).connect(first).then(
    () => null,
    (error) => error,
  );
  check(refused !== null && auth.held.authorizationUrl !== null, `the SDK was sent to authorize (it got ${refused})`);
  const url = auth.held.authorizationUrl;
  check(url.href.startsWith(`${base}/oauth/authorize?`) && url.searchParams.get('code_challenge_method') === 'S256', `the authorization URL ${url.href}`);
  step('OAuth: /mcp without a credential led the SDK to the metadata, registration and the consent page');

  const page = await fetch(url, { redirect: 'manual' });
  const html = await page.text();
  const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1];
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0];
  check(page.status === 200 && handle !== undefined && cookie.startsWith('__Host-oauth-consent'), `the consent page (${page.status})`);
  const form = new URLSearchParams({ handle, key, scope: 'runs:start:e2e-intake', decision: 'approve' });
  const decided = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: form.toString(),
  });
  const location = decided.headers.get('location');
  check(decided.status === 302 && location !== null && location.startsWith(REDIRECT_URI), `the consent's redirect (${decided.status} ${location})`);
  await first.finishAuth(new URL(location).searchParams);
  step('OAuth: granted runs:start:e2e-intake with a key on the consent page; the SDK redeemed the code');

  const client = new Client({ name: 'e2e-oauth-host', version: '1.0.0' });
  await client.connect(transport());
  const { tools } = await client.listTools();
  await client.close();
  check(tools.map((tool) => tool.name).join(',') === 'e2e-intake', `tools/list with the OAuth token: ${tools.map((tool) => tool.name)}`);
  const rest = await fetch(`${base}/runs`, { headers: { authorization: `Bearer ${auth.held.tokens.access_token}` } });
  check(rest.status === 401, `the REST API refuses the OAuth token (${rest.status})`);
  step('OAuth: tools/list with the token shows e2e-intake alone; the REST API refuses the token');
}

// Runs the partner OAuth flow against the running system with openid-client,
// jose and oauth4webapi, configured as docs/identity.md tells a partner: the
// issuer is the gateway's base URL, discovery is RFC 8414, PKCE S256. The
// owner's browser is played by `partnerctl authorize`, which signs in and
// answers the consent page for the URL the library built; the library reads
// the redirect itself. Any failed check throws, and the process exits 1.
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import * as oauth from 'oauth4webapi';
import * as jose from 'jose';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const issuer = env('ISSUER');
const clientId = env('CLIENT_ID');
const redirectUri = env('REDIRECT_URI');
const partnerctl = env('PARTNERCTL');
const email = env('OWNER_EMAIL');
const password = env('OWNER_PASSWORD');
const resource = `${issuer}/v1`;

const step = (what) => console.log(`ok  ${what}`);

// Local http addresses need the libraries' explicit opt-in.
const config = await client.discovery(new URL(issuer), clientId, undefined, client.None(), {
  algorithm: 'oauth2',
  execute: [client.allowInsecureRequests],
});
const md = config.serverMetadata();
assert.equal(md.issuer, issuer);
assert.equal(md.authorization_response_iss_parameter_supported, true);
assert.ok(md.code_challenge_methods_supported.includes('S256'));
step('discovery from the issuer (RFC 8414)');

// authorize runs one authorization; state undefined means none is sent.
async function authorize(state) {
  const verifier = client.randomPKCECodeVerifier();
  const params = {
    redirect_uri: redirectUri,
    scope: 'svc.restaurant.read svc.orders.read',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  };
  if (state !== undefined) params.state = state;
  const url = client.buildAuthorizationUrl(config, params);
  const back = execFileSync(partnerctl, ['authorize', '--url', url.href, '--email', email, '--password', password], { encoding: 'utf8' }).trim();
  const callback = new URL(back);
  assert.equal(callback.searchParams.get('iss'), issuer);
  assert.equal(callback.searchParams.has('state'), state !== undefined);
  return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
}

const first = await authorize(undefined);
step('authorize without state, code exchange');
const second = await authorize(client.randomState());
step('authorize with state, code exchange');
const short = await authorize('abc');
step('authorize with a 3-character state');

const jwks = jose.createRemoteJWKSet(new URL(md.jwks_uri));
for (const t of [first, second, short]) {
  const { payload } = await jose.jwtVerify(t.access_token, jwks, {
    issuer, audience: resource, typ: 'at+jwt', algorithms: ['ES256'],
  });
  assert.equal(payload.client_id, clientId);
}
step('access tokens verified against the JWKS (jose)');

const api = async (token) => {
  const res = await client.fetchProtectedResource(config, token, new URL(`${issuer}/v1/restaurants`), 'GET');
  const body = await res.text();
  assert.equal(res.status, 200, body);
  return JSON.parse(body);
};
const listed = await api(first.access_token);
assert.ok(Array.isArray(listed.data) && listed.data.length > 0);
step('GET /v1/restaurants through the gateway');

const refreshed = await client.refreshTokenGrant(config, first.refresh_token);
assert.notEqual(refreshed.refresh_token, first.refresh_token);
await api(refreshed.access_token);
step('refresh rotates the refresh token; the new access token works');

const refused = async (refreshToken, words) => {
  await assert.rejects(client.refreshTokenGrant(config, refreshToken), (err) => {
    assert.ok(err instanceof client.ResponseBodyError, String(err));
    assert.equal(err.error, 'invalid_grant');
    assert.match(err.error_description, words);
    return true;
  });
};
await refused(first.refresh_token, /already used/);
step('reuse of a rotated refresh token is refused as already used');
await refused(refreshed.refresh_token, /refresh token was revoked/);
step('the reuse revoked the family: its newest refresh token is refused as revoked');

await client.tokenRevocation(config, second.refresh_token);
await refused(second.refresh_token, /refresh token was revoked/);
step('revocation at /oauth2/revoke; the refresh token is refused as revoked');

// RFC 9728: the challenge names the metadata; oauth4webapi builds the
// address from the resource identifier and validates the document strictly.
const challenge = await client.fetchProtectedResource(config, 'not-a-token', new URL(`${issuer}/v1/restaurants`), 'GET').then(
  (res) => assert.fail(`a bad token was answered ${res.status}`),
  (err) => {
    assert.ok(err instanceof client.WWWAuthenticateChallengeError, String(err));
    assert.equal(err.response.status, 401);
    return err.cause.find((c) => c.scheme === 'bearer');
  },
);
const discovered = await oauth.resourceDiscoveryRequest(new URL(resource), { [oauth.allowInsecureRequests]: true });
assert.equal(discovered.url, challenge.parameters.resource_metadata);
const rs = await oauth.processResourceDiscoveryResponse(new URL(resource), discovered);
assert.equal(rs.resource, resource);
assert.deepEqual(rs.authorization_servers, [issuer]);
step('protected resource metadata validated strictly (oauth4webapi, RFC 9728)');

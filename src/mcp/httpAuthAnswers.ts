// What the HTTP server answers about authorization. It takes one bearer token, chosen by the person (or printed
// at start) and never issued by OAuth. An OAuth-capable client (mcp-remote, the Inspector, VS Code) that meets a
// 401 looks for an authorization server, registers and opens a browser, then waits minutes for a sign-in that
// cannot happen. So the answers follow RFC 9728 for a resource that names no authorization server: the 401's
// challenge points at the protected-resource metadata, that metadata lists none, and every OAuth endpoint a client
// falls back to (metadata, registration, authorization, token) answers at once with an OAuth error that says
// where the token comes from. Clients then stop at their first step with that sentence.

/** Said wherever a client asks for OAuth: how to send the token instead. */
export const NO_OAUTH =
  'this Code Mode for Python server does not offer OAuth sign-in: send its token as "Authorization: Bearer <token>" (the token is in the file given with --token-file, or was printed on the server\'s stderr when it started)';

const METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface AuthAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The origin the client reached, from the Host header already checked against the allowed hosts. */
function origin(host: string): string {
  return `http://${host}`;
}

/** RFC 6750's challenge with RFC 9728's pointer to the metadata; `error` only when a token was sent and is wrong. */
export function bearerChallenge(host: string, mcpPath: string, tokenSent: boolean): string {
  const params = [
    'realm="code-mode-python"',
    `resource_metadata="${origin(host)}${METADATA_PATH}${mcpPath}"`,
    ...(tokenSent ? ['error="invalid_token"', 'error_description="the bearer token is not this server\'s"'] : []),
  ];
  return `Bearer ${params.join(', ')}`;
}

/**
 * The answer to a request for OAuth discovery or an OAuth endpoint, whatever its token, or undefined when the
 * path is none of them. None of these answers tells anything the 401 does not.
 */
export function oauthAnswer(method: string, pathname: string, host: string, mcpPath: string): AuthAnswer | undefined {
  if (pathname === METADATA_PATH || pathname === `${METADATA_PATH}${mcpPath}`) {
    if (method !== 'GET') return undefined;
    // RFC 9728: authorization_servers is optional; a resource that lists none takes tokens obtained otherwise.
    return json(200, {
      resource: `${origin(host)}${mcpPath}`,
      bearer_methods_supported: ['header'],
      resource_name: 'Code Mode for Python',
    });
  }
  if (pathname.startsWith('/.well-known/')) return json(404, { error: 'not_found', error_description: NO_OAUTH });
  if (['/register', '/token', '/authorize', '/revoke'].includes(pathname))
    return json(400, { error: 'invalid_request', error_description: NO_OAUTH });
  return undefined;
}

function json(status: number, body: object): AuthAnswer {
  return {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    body: JSON.stringify(body),
  };
}

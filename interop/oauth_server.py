"""An MCP server behind OAuth on the official Python SDK (`mcp` 2.x), for mcp-sansio's
interop tests.

`python oauth_server.py PORT LOG` serves Streamable HTTP at http://127.0.0.1:PORT/mcp and
is its own authorization server, through the SDK's auth routes: protected resource
metadata, authorization server metadata, dynamic client registration, `/authorize` and
`/token`. Requests without a valid token get the SDK's 401 and its challenge; a token
without the `words` scope gets its 403. The SDK checks PKCE at `/token` and, with
`validate_token_resource`, that each token was issued for this server's URL (RFC 8707).

The user is a robot: `/authorize` approves at once and redirects with the code (the SDK
itself refuses, by the redirect, a scope the client was not registered for). Every decision is appended to LOG as one JSON line
(`{"step": ..., ...}`), the witness of what reached the authorization server.

With `OAUTH_CLIENT_AUTH` set to `client_secret_basic` or `client_secret_post`, every client
is registered as a confidential one authenticating that way, whatever it asked for, as
RFC 7591 lets a server decide: the registration answers with a secret and the method, and
the SDK's token endpoint then takes the client only with its secret sent that way.
"""

import json
import os
import secrets
import sys
import time

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

PORT = int(sys.argv[1])
LOG = sys.argv[2]
BASE = f"http://127.0.0.1:{PORT}"
CLIENT_AUTH = os.environ.get("OAUTH_CLIENT_AUTH")


def log(step, **fields):
    with open(LOG, "a", encoding="utf-8") as out:
        out.write(json.dumps({"step": step, **fields}, sort_keys=True) + "\n")


class RobotProvider:
    """An authorization server whose user approves everything."""

    def __init__(self):
        self.clients = {}
        self.codes = {}
        self.access = {}
        self.refresh = {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull):
        if CLIENT_AUTH:
            client_info.token_endpoint_auth_method = CLIENT_AUTH
            client_info.client_secret = secrets.token_hex(16)
            client_info.client_secret_expires_at = 0
        self.clients[client_info.client_id] = client_info
        log("register", client_name=client_info.client_name,
            redirect_uris=[str(u) for u in client_info.redirect_uris or []],
            auth_method=client_info.token_endpoint_auth_method)

    async def authorize(self, client, params: AuthorizationParams):
        log("authorize", scopes=params.scopes, resource=params.resource,
            challenge_length=len(params.code_challenge), state=params.state)
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300,
            client_id=client.client_id, code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def issue(self, client_id, scopes, resource, step):
        token, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[token] = AccessToken(token=token, client_id=client_id, scopes=scopes,
                                         expires_at=int(time.time()) + 3600, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id,
                                             scopes=scopes, resource=resource)
        log(step, scopes=scopes, resource=resource)
        return OAuthToken(access_token=token, token_type="Bearer", expires_in=3600,
                          refresh_token=refresh, scope=" ".join(scopes))

    async def exchange_authorization_code(self, client, authorization_code):
        self.codes.pop(authorization_code.code, None)
        return self.issue(client.client_id, authorization_code.scopes,
                          authorization_code.resource, "token")

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        self.refresh.pop(refresh_token.token, None)
        return self.issue(client.client_id, scopes or refresh_token.scopes,
                          refresh_token.resource, "refresh")

    async def load_access_token(self, token):
        return self.access.get(token)

    async def revoke_token(self, token):
        self.access.pop(getattr(token, "token", None), None)


server = MCPServer(
    "oauth-word-count",
    auth_server_provider=RobotProvider(),
    auth=AuthSettings(
        issuer_url=BASE,
        resource_server_url=f"{BASE}/mcp",
        validate_token_resource=True,
        required_scopes=["words"],
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=["words"], default_scopes=["words"]),
    ),
)


@server.tool()
def word_count(text: str) -> str:
    """Count the words in a short text."""
    return f"{len(text.split())} words"


server.run(transport="streamable-http", host="127.0.0.1", port=PORT)

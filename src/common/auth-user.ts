/** The principal behind a request, whichever path authenticated it. */
export interface AuthUser {
  id: string;
  admin: boolean;
  /** JWT: a person at the web UI. API_TOKEN: a tool acting for that person. */
  via: 'JWT' | 'API_TOKEN';
  /** The access token's id (JWT) or the API token's id. */
  credentialId: string;
  /** JWT: when the token was issued (epoch ms), for the user's tokensValidAfter. */
  issuedAt?: number;
  /** API_TOKEN: when the token expires (epoch ms), if it does (a live socket closes then). */
  expiresAt?: number;
}

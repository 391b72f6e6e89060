import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import type { CreatedApiKey } from '../../api/client';
import { useApi } from '../../session-context';
import { ErrorMessage, Field, formatDate, Loaded, noItems, Notice, Page } from '../../ui/components';
import { outcomeOf, said } from '../../ui/outcome';

export function ApiKeys() {
  const api = useApi();
  const queries = useQueryClient();
  const keys = useQuery({ queryKey: ['api-keys'], queryFn: () => api.listApiKeys() });
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<CreatedApiKey | undefined>();
  const [copied, setCopied] = useState(false);
  const create = useMutation({
    mutationFn: () =>
      api.createApiKey(name.trim(), expires ? new Date(`${expires}T23:59:59`).toISOString() : undefined),
    onSuccess: (key) => {
      setCreated(key);
      setCopied(false);
      setName('');
      setExpires('');
      void queries.invalidateQueries({ queryKey: ['api-keys'] });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: number) => api.revokeApiKey(id),
    onSuccess: () => void queries.invalidateQueries({ queryKey: ['api-keys'] }),
  });
  // The new key's panel is no notice: it holds a secret shown once, and stays until its owner says it is copied.
  const outcome = outcomeOf({ create: said(create), revoke: said(revoke) });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };

  return (
    <Page title="API keys">
      <p>
        API keys let tools (CI runners, SDKs, scripts) send results as you. Send one as{' '}
        <code>Authorization: Bearer &lt;key&gt;</code>.
      </p>
      <form className="card" onSubmit={submit} noValidate aria-label="Create an API key">
        <h2>Create a key</h2>
        <div className="row">
          <Field
            label="Name"
            name="name"
            required
            maxLength={100}
            value={name}
            onChange={(e) => setName(e.target.value)}
            hint="What uses it, e.g. nightly CI"
          />
          <Field
            label="Expires (optional)"
            name="expires"
            type="date"
            value={expires}
            onChange={(e) => setExpires(e.target.value)}
          />
        </div>
        <ErrorMessage error={outcome.errorOf('create')} />
        <button type="submit" disabled={create.isPending || !name.trim()}>
          Create key
        </button>
      </form>
      {created ? (
        <div className="card new-key" role="region" aria-label="The new key">
          <Notice>
            Copy the key <strong>{created.name}</strong> now: <strong>you will not see it again</strong>.
          </Notice>
          <div className="token-row">
            <code className="token" data-testid="new-token">
              {created.token}
            </code>
            <button
              type="button"
              onClick={() => {
                void navigator.clipboard?.writeText(created.token).then(() => setCopied(true));
              }}
            >
              {copied ? 'Copied' : 'Copy'}
            </button>
          </div>
          <button type="button" className="link" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </div>
      ) : null}
      <h2>Your keys</h2>
      <ErrorMessage error={outcome.errorOf('revoke')} />
      <Loaded query={keys} what="Loading keys" isEmpty={noItems} empty={<>No API keys yet.</>}>
        {(data) => (
          <div className="table-wrap">
            {/* On a phone, stacked: each key's dates and Revoke in view, not off the screen's edge. */}
            <table className="stacked">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Created</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.content.map((key) => (
                  <tr key={key.id}>
                    <td>{key.name}</td>
                    <td data-label="Prefix">
                      <code>{key.prefix}…</code>
                    </td>
                    <td data-label="Created">{formatDate(key.createdAt)}</td>
                    <td data-label="Expires">{key.expiresAt ? formatDate(key.expiresAt) : 'never'}</td>
                    <td data-label="Last used">{key.lastUsedAt ? formatDate(key.lastUsedAt) : 'never'}</td>
                    <td>
                      <button
                        type="button"
                        className="danger"
                        disabled={revoke.isPending}
                        onClick={() => {
                          if (
                            window.confirm(
                              `Revoke the key "${key.name}"? Tools using it stop working at once.`,
                            )
                          ) {
                            revoke.mutate(key.id);
                          }
                        }}
                      >
                        Revoke<span className="visually-hidden"> {key.name}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loaded>
    </Page>
  );
}

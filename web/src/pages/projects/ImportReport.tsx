import { useQuery } from '@tanstack/react-query';
import { type DragEvent, type FormEvent, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { type Project, roleAtLeast, type RunCounts } from '../../api/client';
import { ApiError } from '../../api/session';
import { useApi, useSession } from '../../session-context';
import { counted, ErrorMessage, Field, Loading, Page } from '../../ui/components';
import { outcomesInWords } from '../../ui/CountBar';

const FORMATS = ['auto', 'junit', 'testng', 'nunit', 'xunit', 'trx', 'cucumber', 'ctrf'];

interface Imported {
  runId: number;
  format: string;
  counts: RunCounts;
  warnings: string[];
}

/** Sends `file` to POST /api/import/{format} with upload progress (fetch has none): the run's counts, or the API's error. */
function upload(
  url: string,
  token: string | undefined,
  file: File,
  onProgress: (fraction: number) => void,
): Promise<Imported> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    if (token) {
      xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    }
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      let body: { message?: string } | Imported | undefined;
      try {
        body = JSON.parse(xhr.responseText) as typeof body;
      } catch {
        body = undefined;
      }
      if (xhr.status === 201) {
        resolve(body as Imported);
      } else {
        reject(
          new ApiError(
            xhr.status,
            (body as { message?: string } | undefined)?.message ?? `${xhr.status} ${xhr.statusText}`,
          ),
        );
      }
    };
    xhr.onerror = () => reject(new TypeError('The upload failed'));
    xhr.send(file);
  });
}

/**
 * Import a report into a project (the recommended way in), for its REPORTERs and up: anyone else is told which role
 * it takes before choosing a file, not by a 403 after uploading it.
 */
export function ImportReport() {
  const api = useApi();
  const projectId = Number(useParams().projectId);
  const project = useQuery({ queryKey: ['project', projectId], queryFn: () => api.getProject(projectId) });
  if (project.isPending || project.error) {
    return (
      <Page title="Import a report">
        <BackToRuns projectId={projectId} />
        {project.isPending ? <Loading what="Loading the project" /> : <ErrorMessage error={project.error} />}
      </Page>
    );
  }
  const { name, role } = project.data;
  return (
    <Page title={`Import a report into ${name}`}>
      <BackToRuns projectId={projectId} />
      {roleAtLeast(role, 'REPORTER') ? (
        <ImportForm project={project.data} />
      ) : (
        <p className="card narrow">
          You need the Reporter role to import reports into {name}. You are a {role.toLowerCase()} here: a
          project owner can change that on the project's{' '}
          <Link to={`/projects/${projectId}/members`}>members page</Link>.
        </p>
      )}
    </Page>
  );
}

function BackToRuns({ projectId }: { projectId: number }) {
  return (
    <p>
      <Link to={`/projects/${projectId}`}>← All runs of the project</Link>
    </p>
  );
}

/** A file or an archive, its format named or detected, sent with progress. */
function ImportForm({ project }: { project: Project }) {
  const { session } = useSession();
  const projectId = project.id;
  const [file, setFile] = useState<File | undefined>();
  const fileInput = useRef<HTMLInputElement>(null);
  const [format, setFormat] = useState('auto');
  const [runName, setRunName] = useState('');
  // Run attributes, and so the run's stream: the branch, commit and environment the report is of.
  const [branch, setBranch] = useState('');
  const [commit, setCommit] = useState('');
  const [env, setEnv] = useState('');
  const [progress, setProgress] = useState<number | undefined>();
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<Imported | undefined>();
  const [dragging, setDragging] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!file) {
      return;
    }
    setError(undefined);
    setDone(undefined);
    setProgress(0);
    const query = new URLSearchParams({
      projectId: String(projectId),
      // Named after the file and the time unless named here (the raw upload carries no file name).
      runName: runName.trim() || `${file.name.slice(0, 200)} ${new Date().toISOString()}`,
      ...(branch.trim() ? { branch: branch.trim() } : {}),
      ...(commit.trim() ? { commit: commit.trim() } : {}),
      ...(env.trim() ? { env: env.trim() } : {}),
    });
    const url = `/api/import/${format}?${query.toString()}`;
    try {
      // An access token that expires during a long upload is refreshed, and the report sent again.
      setDone(
        await session.authorized((token) => {
          setProgress(0);
          return upload(url, token, file, setProgress);
        }),
      );
      // Imported: the file and the run's name are let go, so that Import again is not the same run twice. The
      // branch, commit and environment stay for the next report of the same build.
      setFile(undefined);
      setRunName('');
      if (fileInput.current) {
        fileInput.current.value = '';
      }
    } catch (e) {
      setError(e);
    } finally {
      setProgress(undefined);
    }
  };
  const drop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    const dropped = event.dataTransfer.files[0];
    if (dropped) {
      setFile(dropped);
    }
  };

  return (
    <>
      <form
        className="card"
        onSubmit={(e) => void submit(e)}
        noValidate
        aria-label={`Import a report into ${project.name}`}
      >
        {/* Dropping is a pointer shortcut: the file input inside is the control for keyboards and screen readers. */}
        {/* eslint-disable-next-line jsx-a11y-x/no-static-element-interactions */}
        <div
          className={`dropzone${dragging ? ' dragging' : ''}`}
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={drop}
        >
          <label htmlFor="report-file">Drop a report here, or choose one</label>
          <input
            id="report-file"
            type="file"
            ref={fileInput}
            onChange={(e) => setFile(e.target.files?.[0])}
          />
          <p className="hint">
            JUnit XML (and its flavours), TestNG, NUnit, xUnit.net, TRX, Cucumber JSON or CTRF; a .zip of
            many, or a .gz.
          </p>
          {file ? <p>Selected: {file.name}</p> : null}
        </div>
        <div className="row">
          <div className="field">
            <label htmlFor="report-format">Format</label>
            <select id="report-format" value={format} onChange={(e) => setFormat(e.target.value)}>
              {FORMATS.map((f) => (
                <option key={f} value={f}>
                  {f === 'auto' ? 'detect (auto)' : f}
                </option>
              ))}
            </select>
          </div>
          <Field
            label="Run name (optional)"
            value={runName}
            onChange={(e) => setRunName(e.target.value)}
            maxLength={200}
            placeholder={file ? `${file.name} and the time` : 'the file name and the time'}
          />
        </div>
        <div className="row">
          <Field
            label="Branch (optional)"
            value={branch}
            onChange={(e) => setBranch(e.target.value)}
            maxLength={200}
          />
          <Field
            label="Commit (optional)"
            value={commit}
            onChange={(e) => setCommit(e.target.value)}
            maxLength={200}
          />
          <Field
            label="Environment (optional)"
            value={env}
            onChange={(e) => setEnv(e.target.value)}
            maxLength={200}
          />
        </div>
        {progress !== undefined ? (
          <p>
            <label htmlFor="upload-progress">Uploading </label>
            <progress id="upload-progress" max={1} value={progress} /> {Math.round(progress * 100)}%
          </p>
        ) : null}
        <ErrorMessage error={error} />
        <button type="submit" disabled={!file || progress !== undefined}>
          Import
        </button>
      </form>
      {done ? (
        <section className="card" aria-label="Imported">
          <p className="notice" role="status">
            Imported {counted(done.counts.total, 'result')} ({done.format}): {outcomesInWords(done.counts)}.
          </p>
          {done.warnings.length ? (
            <ul className="warnings">
              {done.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          ) : null}
          <p>
            <Link to={`/runs/${done.runId}`}>Open the run</Link>
          </p>
        </section>
      ) : null}
    </>
  );
}

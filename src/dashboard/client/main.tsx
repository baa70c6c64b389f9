import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AUTH_NEEDED_EVENT, refreshAll, setToken } from './api';
import { useRoute } from './hooks';
import { Toasts } from './components/toasts';
import { JobPage } from './pages/job';
import { JobsPage, OverviewPage } from './pages/overview';
import { TaskManagersPage } from './pages/taskmanagers';

function TokenForm({ onDone }: { onDone: () => void }) {
  const [value, setValue] = useState('');
  return (
    <form
      class="token-form"
      onSubmit={(e) => {
        e.preventDefault();
        setToken(value);
        onDone();
        refreshAll();
      }}
    >
      <strong>This REST API needs a token</strong> (rest.auth.token).
      <input type="password" value={value} placeholder="token" onInput={(e) => setValue((e.target as HTMLInputElement).value)} />
      <button type="submit" class="primary">
        Use token
      </button>
    </form>
  );
}

function App() {
  const route = useRoute();
  const [authNeeded, setAuthNeeded] = useState(false);
  useEffect(() => {
    const on = (): void => setAuthNeeded(true);
    window.addEventListener(AUTH_NEEDED_EVENT, on);
    return () => window.removeEventListener(AUTH_NEEDED_EVENT, on);
  }, []);
  const [page = 'overview', id, tab = 'overview'] = route;
  let content;
  if (page === 'job' && id !== undefined) content = <JobPage jobId={id} tab={tab} />;
  else if (page === 'jobs') content = <JobsPage />;
  else if (page === 'taskmanagers') content = <TaskManagersPage selected={id === undefined ? undefined : decodeURIComponent(id)} />;
  else content = <OverviewPage />;
  const nav = (href: string, label: string, active: boolean) => (
    <a href={href} class={active ? 'active' : ''}>
      {label}
    </a>
  );
  return (
    <div class="layout">
      <aside class="sidebar">
        <a class="brand" href="#/overview">
          Sluice
        </a>
        <nav>
          {nav('#/overview', 'Overview', page === 'overview')}
          {nav('#/jobs', 'Jobs', page === 'jobs' || page === 'job')}
          {nav('#/taskmanagers', 'TaskManagers', page === 'taskmanagers')}
          <a href="metrics" target="_blank" rel="noopener">
            Metrics (Prometheus)
          </a>
        </nav>
      </aside>
      <main class="main">
        {authNeeded && <TokenForm onDone={() => setAuthNeeded(false)} />}
        {content}
      </main>
      <Toasts />
    </div>
  );
}

render(<App />, document.getElementById('app')!);

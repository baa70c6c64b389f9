import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { REFRESH_EVENT } from './api';

export interface Polled<T> {
  readonly data: T | undefined;
  readonly error: Error | undefined;
  readonly reload: () => void;
}

/** Loads now, then every `intervalMs` and on refreshAll(); keeps the last data while reloading. */
export function usePoll<T>(load: () => Promise<T>, deps: readonly unknown[], intervalMs = 2000): Polled<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(() => {
    const g = ++generation.current;
    loadRef.current().then(
      (d) => {
        if (g !== generation.current) return;
        setData(d);
        setError(undefined);
      },
      (e: unknown) => {
        if (g !== generation.current) return;
        setError(e instanceof Error ? e : new Error(String(e)));
      },
    );
  }, []);
  useEffect(() => {
    setData(undefined);
    setError(undefined);
    reload();
    const timer = setInterval(reload, intervalMs);
    window.addEventListener(REFRESH_EVENT, reload);
    return () => {
      generation.current++;
      clearInterval(timer);
      window.removeEventListener(REFRESH_EVENT, reload);
    };
  }, deps);
  return { data, error, reload };
}

/** The `#/...` route, split in segments. */
export function useRoute(): string[] {
  const parse = (): string[] => location.hash.replace(/^#\/?/, '').split('/').filter((s) => s !== '');
  const [route, setRoute] = useState(parse);
  useEffect(() => {
    const on = (): void => setRoute(parse());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

import { fileURLToPath } from 'node:url';

/** The repository root: FunctionSpec entries are relative to it, and it holds package-lock.json. */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** "inventory-on-request" -> "InventoryOnRequest": construct ids that read well as logical ids. */
export const pascal = (id: string): string =>
  id
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

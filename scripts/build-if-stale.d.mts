export const BUILT: string;
export const BUNDLED: string;
export function staleReason(root: string): string | null;
export function buildIfStale(root: string, build: () => number, say?: (line: string) => void): number;

export const KNOWN: string;
export function checkImports(root: string): string[];
export function compareWithKnown(findings: string[], known: string[]): { added: string[]; gone: string[] };
export function readKnown(root: string): string[];

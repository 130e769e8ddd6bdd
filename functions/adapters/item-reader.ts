/** Typed reads of a DynamoDB item, failing loudly on a shape the code did not write. */
export interface ItemReader {
  string(name: string): string;
  optionalString(name: string): string | null;
  number(name: string): number;
  optionalNumber(name: string): number | null;
  boolean(name: string): boolean;
  /** A string set (SS); an absent one is empty. */
  stringSet(name: string): string[];
  child(name: string): ItemReader;
}

export function readItem(item: Record<string, unknown>, path = ''): ItemReader {
  const value = (name: string, type: string, optional: boolean): unknown => {
    const found = item[name];
    if ((found === undefined || found === null) && optional) return null;
    if (typeof found !== type) throw new Error(`item attribute ${path}${name} is not a ${type}`);
    return found;
  };
  return {
    string: (name) => value(name, 'string', false) as string,
    optionalString: (name) => value(name, 'string', true) as string | null,
    number: (name) => value(name, 'number', false) as number,
    optionalNumber: (name) => value(name, 'number', true) as number | null,
    boolean: (name) => value(name, 'boolean', false) as boolean,
    stringSet: (name) => {
      const found = item[name];
      if (found === undefined) return [];
      if (!(found instanceof Set) || ![...found].every((entry) => typeof entry === 'string'))
        throw new Error(`item attribute ${path}${name} is not a string set`);
      return [...(found as Set<string>)];
    },
    child: (name) => readItem(value(name, 'object', false) as Record<string, unknown>, `${path}${name}.`),
  };
}

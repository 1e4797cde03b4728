/**
 * How GraphQL spells a choice: its wire value (what REST and the rules take) in upper case, with
 * `-` as `_` (`round-robin` is `ROUND_ROBIN`). The server names its enum values so, and the
 * dashboard maps them back, by this one rule.
 */
export type EnumValue<W extends string> = W extends `${infer A}-${infer B}`
  ? EnumValue<`${A}_${B}`>
  : Uppercase<W>;

export const enumValueOf = <W extends string>(wire: W): EnumValue<W> =>
  wire.toUpperCase().replaceAll('-', '_') as EnumValue<W>;

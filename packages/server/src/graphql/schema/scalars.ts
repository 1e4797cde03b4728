import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { builder } from '../builder.ts';

builder.scalarType('DateTime', {
  description: 'An ISO-8601 date and time in UTC',
  serialize: (value) => value.toISOString(),
  parseValue: (value) => {
    if (typeof value !== 'string') throw new GraphQLError('DateTime must be an ISO-8601 string');
    const date = new Date(value);
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO-8601 string');
    return date;
  },
});

function literal(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return node.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return node.values.map(literal);
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, literal(f.value)]));
    default:
      throw new GraphQLError('JSON literals cannot hold variables');
  }
}

builder.scalarType('JSON', {
  description: 'Any JSON value',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: literal,
});

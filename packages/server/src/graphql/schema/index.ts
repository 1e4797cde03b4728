import { builder } from '../builder.ts';
import './scalars.ts';
import './errors.ts';
import './user.ts';
import './apiKey.ts';
import './enums.ts';
import './gate.ts';
import './model.ts';
import './log.ts';
import './agent.ts';
import './gateHistory.ts';
import './architect.ts';
import './admin.ts';
import './webhooks.ts';

builder.queryType({});
builder.mutationType({});

export const schema = builder.toSchema({ sortSchema: true });

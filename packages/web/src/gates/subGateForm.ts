import { sentence } from '../forms/formErrors.ts';
import { splitTags } from './gateForm.ts';

/** What the attach form holds: text inputs, tools as one comma-separated line. */
export type SubGateFormValues = {
  subGateId: string;
  role: string;
  description: string;
  visibleTools: string;
};

export const emptySubGateForm: SubGateFormValues = {
  subGateId: '',
  role: '',
  description: '',
  visibleTools: '',
};

/** The SubGateInput the form stands for: blank description as none, blank tools as every tool. */
export function toSubGateInput(values: SubGateFormValues) {
  return {
    subGateId: values.subGateId,
    role: values.role.trim(),
    description: values.description.trim() === '' ? null : values.description,
    visibleTools: values.visibleTools.trim() === '' ? null : splitTags(values.visibleTools),
  };
}

/** The attach form's field for a server issue ("visibleTools.1", "role"), or null for above the form. */
export function subGateFieldOfIssue(issue: {
  path: string;
  message: string;
}): { field: keyof SubGateFormValues; message: string } | null {
  const [head = '', index] = issue.path.split('.');
  if (head === 'visibleTools' && index !== undefined) {
    return { field: 'visibleTools', message: `Tool ${Number(index) + 1}: ${issue.message}` };
  }
  if (head === 'subGateId' || head === 'role' || head === 'description' || head === 'visibleTools') {
    return { field: head, message: sentence(issue.message) };
  }
  return null;
}

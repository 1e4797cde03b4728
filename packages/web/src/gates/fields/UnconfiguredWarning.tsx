import { useWatch } from 'react-hook-form';
import type { GateFormApi } from './controls.tsx';
import type { ModelOption, ProviderInfo } from './ModelSelect.tsx';

/**
 * The providers a gate's models are on, when none of them is configured here (the gate can be
 * saved, but every request through it would fail); null when one is, or when it cannot be told.
 */
export function unconfiguredProviders(ids: string[], models: ModelOption[]): ProviderInfo[] | null {
  const named = ids.filter((id) => id !== '');
  if (named.length === 0) return null;
  const providers = new Map<string, ProviderInfo>();
  for (const id of named) {
    const info = models.find((model) => model.id === id)?.providerInfo;
    if (!info || info.configured) return null;
    providers.set(info.name, info);
  }
  return [...providers.values()];
}

/** Beside Save: a warning, not a refusal, when every model the gate names is on an unconfigured provider. */
export function UnconfiguredWarning({ form, models }: { form: GateFormApi; models: ModelOption[] }) {
  const [model, fallbackModels] = useWatch({ control: form.control, name: ['model', 'fallbackModels'] });
  const providers = unconfiguredProviders([model, ...(fallbackModels ?? []).map((row) => row.model)], models);
  if (!providers) return null;
  const variables = providers.flatMap((p) => (p.envVariable ? [p.envVariable] : []));
  return (
    <p className="banner warning unconfigured-warning" role="status">
      None of this gate’s models is on a provider configured on this server (
      {providers.map((p) => p.name).join(', ')}): it can be saved, but its requests will fail until{' '}
      {variables.length > 0 ? `${variables.join(' or ')} is set` : 'one is configured'}, or a mock model is
      chosen.
    </p>
  );
}

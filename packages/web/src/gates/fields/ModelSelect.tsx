import { useCombobox } from 'downshift';
import { useMemo, useState } from 'react';
import type { FieldError } from 'react-hook-form';
import { useController } from 'react-hook-form';
import { formatCount } from '../../logs/format.ts';
import type { GateFormApi } from './controls.tsx';

/** Whether this server can call a provider, and if not what would let it. */
export type ProviderInfo = { name: string; configured: boolean; envVariable: string | null };

export type ModelOption = {
  id: string;
  name: string;
  provider: string;
  deprecated: boolean;
  inputPricePerMTok?: number | null;
  outputPricePerMTok?: number | null;
  contextWindow?: number | null;
  unitPrice?: { usd: number; per: string } | null;
  /** null while the providers are unknown (not loaded, or could not be). */
  providerInfo?: ProviderInfo | null;
};
export type ModelsState = 'loading' | 'ready' | 'failed';

/** The most options the list draws at once; typing narrows the rest. */
const SHOWN = 150;

/**
 * A model choice among the catalog's models of the gate's task type: a combobox whose text
 * filters the models as you type, grouped by provider, each provider marked configured or
 * naming the variable it needs, each model with its prices and context (downshift's
 * useCombobox gives the ARIA combobox pattern and its keys). A value the list lacks (a model
 * gone from the catalog) stays shown, so showing a gate never changes it.
 */
export function ModelSelect({
  form,
  id,
  name,
  error,
  models,
  modelsState,
}: {
  form: GateFormApi;
  id: string;
  name: 'model' | `fallbackModels.${number}.model`;
  error: FieldError | undefined;
  models: ModelOption[];
  modelsState: ModelsState;
}) {
  const { field } = useController({ control: form.control, name });
  const value = field.value ?? '';
  const [query, setQuery] = useState('');
  const selected = useMemo(
    () =>
      value === ''
        ? null
        : (models.find((model) => model.id === value) ?? {
            id: value,
            name: 'not offered for this task type',
            provider: '',
            deprecated: false,
          }),
    [models, value],
  );
  const filtered = useMemo(() => filterModels(models, query), [models, query]);
  const groups = useMemo(() => groupByProvider(filtered), [filtered]);
  const shown = groups.flatMap(([, group]) => group);
  const matching = filtered.length;

  const combobox = useCombobox<ModelOption>({
    items: shown,
    itemToString: (model) => model?.id ?? '',
    selectedItem: selected,
    inputId: id,
    labelId: `${id}-label`,
    menuId: `${id}-listbox`,
    onSelectedItemChange: ({ selectedItem }) => field.onChange(selectedItem?.id ?? ''),
    // Escape and leaving the box keep the model chosen and show it again, never half-typed text.
    stateReducer: (state, { type, changes }) => {
      if (type === useCombobox.stateChangeTypes.InputKeyDownEscape) {
        return { ...changes, selectedItem: state.selectedItem, inputValue: state.selectedItem?.id ?? '' };
      }
      if (type === useCombobox.stateChangeTypes.InputBlur) {
        return { ...changes, inputValue: (changes.selectedItem ?? state.selectedItem)?.id ?? '' };
      }
      return changes;
    },
    onInputValueChange: ({ inputValue, type }) => {
      setQuery(type === useCombobox.stateChangeTypes.InputChange ? (inputValue ?? '') : '');
    },
  });
  const { isOpen, highlightedIndex, getInputProps, getMenuProps, getItemProps, getToggleButtonProps } =
    combobox;

  const placeholder =
    modelsState === 'loading'
      ? 'Loading models…'
      : modelsState === 'failed'
        ? 'Models could not be loaded'
        : 'Search models by name or provider';
  const describedBy = [error ? `${id}-error` : null, selected ? `${id}-chosen` : null]
    .filter(Boolean)
    .join(' ');
  let index = 0;

  return (
    <div className="model-picker">
      <div className="model-picker-input">
        <input
          {...getInputProps({
            ref: field.ref,
            onBlur: field.onBlur,
            disabled: modelsState !== 'ready',
            placeholder,
            'aria-invalid': error ? true : undefined,
            'aria-describedby': describedBy || undefined,
          })}
          className="mono model-picker-text"
          autoComplete="off"
          spellCheck={false}
        />
        <button
          type="button"
          className="button subtle small"
          {...getToggleButtonProps({ disabled: modelsState !== 'ready' })}
          aria-label={isOpen ? 'Hide models' : 'Show models'}
        >
          {isOpen ? '▴' : '▾'}
        </button>
      </div>
      {selected && (
        <p className="hint" id={`${id}-chosen`}>
          {describeModel(selected)}
        </p>
      )}
      <div
        {...getMenuProps({ 'aria-labelledby': undefined, 'aria-label': 'Models to choose from' })}
        className={isOpen ? 'model-list open' : 'model-list'}
        hidden={!isOpen}
      >
        {isOpen && shown.length === 0 && (
          <p className="muted model-list-note">No model of this task type matches “{query}”.</p>
        )}
        {isOpen &&
          groups.map(([provider, group]) => (
            // biome-ignore lint/a11y/useSemanticElements: a group of options inside a listbox (ARIA), not of form controls
            <div key={provider} role="group" aria-labelledby={`${id}-group-${provider}`}>
              <div id={`${id}-group-${provider}`} className="model-group">
                <strong>{group.info?.name ?? provider}</strong> <ProviderMark info={group.info} />
              </div>
              {group.map((model) => {
                const i = index++;
                return (
                  <div
                    key={model.id}
                    className={[
                      'model-option',
                      highlightedIndex === i && 'highlighted',
                      selected?.id === model.id && 'selected',
                    ]
                      .filter(Boolean)
                      .join(' ')}
                    {...getItemProps({ item: model, index: i })}
                  >
                    <span className="mono">{model.id}</span>
                    {model.deprecated && <span className="badge warning">deprecated</span>}
                    <span className="muted small model-facts">{modelFacts(model)}</span>
                  </div>
                );
              })}
            </div>
          ))}
        {isOpen && shown.length < matching && (
          <p className="muted model-list-note">
            Showing {formatCount(shown.length)} of {formatCount(matching)} models: type to narrow.
          </p>
        )}
      </div>
    </div>
  );
}

function ProviderMark({ info }: { info: ProviderInfo | null | undefined }) {
  if (!info) return null;
  if (info.configured) return <span className="badge ok">configured</span>;
  return (
    <span className="badge warning">not configured{info.envVariable ? `: set ${info.envVariable}` : ''}</span>
  );
}

const usd = (n: number) =>
  `$${n.toLocaleString('en-US', n >= 1 || n === 0 ? { maximumFractionDigits: 2 } : { maximumSignificantDigits: 3 })}`;

/** Its prices (input / output per 1M tokens, or per unit for media) and its context window. */
export function modelFacts(model: ModelOption): string {
  const facts: string[] = [];
  if (model.unitPrice) facts.push(`${usd(model.unitPrice.usd)} per ${model.unitPrice.per}`);
  else if (model.inputPricePerMTok != null || model.outputPricePerMTok != null) {
    const price = (n: number | null | undefined) => (n == null ? '?' : usd(n));
    facts.push(`${price(model.inputPricePerMTok)} in / ${price(model.outputPricePerMTok)} out per 1M tokens`);
  } else if (model.inputPricePerMTok === null) facts.push('no published price');
  if (model.contextWindow) facts.push(`${formatCount(model.contextWindow)} context`);
  return facts.join(' · ');
}

function describeModel(model: ModelOption): string {
  const parts = [model.name, modelFacts(model)];
  const info = model.providerInfo;
  if (info && !info.configured) {
    parts.push(`${info.name} is not configured here${info.envVariable ? ` (set ${info.envVariable})` : ''}`);
  }
  return parts.filter(Boolean).join(' · ');
}

/** Models whose id, name or provider holds every word of the query. */
export function filterModels(models: ModelOption[], query: string): ModelOption[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return models;
  return models.filter((model) => {
    const text = `${model.id} ${model.name} ${model.providerInfo?.name ?? ''}`.toLowerCase();
    return words.every((word) => text.includes(word));
  });
}

type Group = ModelOption[] & { info: ProviderInfo | null | undefined };

/** By provider, configured providers first; at most SHOWN options in all. */
function groupByProvider(models: ModelOption[]): [string, Group][] {
  const groups = new Map<string, ModelOption[]>();
  for (const model of models) {
    const group = groups.get(model.provider);
    if (group) group.push(model);
    else groups.set(model.provider, [model]);
  }
  const ordered = [...groups.entries()].sort(
    ([, a], [, b]) =>
      Number(b[0]?.providerInfo?.configured ?? 0) - Number(a[0]?.providerInfo?.configured ?? 0),
  );
  let room = SHOWN;
  const shown: [string, Group][] = [];
  for (const [provider, all] of ordered) {
    if (room <= 0) break;
    const group = Object.assign(all.slice(0, room), { info: all[0]?.providerInfo });
    room -= group.length;
    shown.push([provider, group]);
  }
  return shown;
}

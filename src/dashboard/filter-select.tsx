/** One choice of a `<select>`: the value the form sends and the text shown for it. */
export type SelectChoice = readonly [value: string, label: string];

/** Each value as its own label, for lists whose values read well as they are (states, sizes). */
export const choicesOf = (values: readonly (string | number)[]): SelectChoice[] =>
  values.map((value) => [String(value), String(value)]);

/**
 * A labelled `<select>` of a filter or form: `selected` is the value shown as chosen, "" for the
 * blank choice ("any") a filter leaves unset.
 */
export function LabelledSelect(props: {
  label: string;
  name: string;
  choices: readonly SelectChoice[];
  selected: string;
}) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        {props.choices.map(([value, label]) => (
          <option value={value} selected={value === props.selected}>
            {label}
          </option>
        ))}
      </select>
    </label>
  );
}

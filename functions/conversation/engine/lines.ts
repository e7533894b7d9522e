/**
 * The few lines the service itself says in a turn — the model failed, nothing was said, a search takes
 * a moment — in the speaking agent's language (its BCP 47 tag's language; English where none is
 * written here). A handed-to agent's apology is in its own language, not the first agent's.
 */
export interface ServiceLines {
  /** The model failed or the turn ran out of time. */
  modelTrouble: string;
  /** The model said nothing. */
  notCaught: string;
  /** Said before a knowledge search when nothing was said yet (ends with a space: words follow). */
  oneMoment: string;
}

const LINES: Record<string, ServiceLines> = {
  en: {
    modelTrouble: "I'm sorry, I'm having trouble answering right now. Could you say that again?",
    notCaught: "I'm sorry, I didn't catch that. Could you say it again?",
    oneMoment: 'One moment while I check that. ',
  },
  es: {
    modelTrouble: 'Lo siento, ahora mismo tengo problemas para responder. ¿Podría repetirlo?',
    notCaught: 'Lo siento, no le he entendido. ¿Podría repetirlo?',
    oneMoment: 'Un momento, lo compruebo. ',
  },
  fr: {
    modelTrouble: "Désolé, j'ai du mal à répondre pour le moment. Pourriez-vous répéter ?",
    notCaught: "Désolé, je n'ai pas compris. Pourriez-vous répéter ?",
    oneMoment: 'Un instant, je vérifie. ',
  },
  de: {
    modelTrouble: 'Entschuldigung, ich kann gerade nicht antworten. Könnten Sie das wiederholen?',
    notCaught: 'Entschuldigung, das habe ich nicht verstanden. Könnten Sie es wiederholen?',
    oneMoment: 'Einen Moment, ich sehe nach. ',
  },
  it: {
    modelTrouble: 'Mi scusi, in questo momento ho difficoltà a rispondere. Può ripetere?',
    notCaught: 'Mi scusi, non ho capito. Può ripetere?',
    oneMoment: 'Un attimo, controllo. ',
  },
  pt: {
    modelTrouble: 'Desculpe, estou com dificuldade para responder agora. Pode repetir?',
    notCaught: 'Desculpe, não entendi. Pode repetir?',
    oneMoment: 'Um momento, vou verificar. ',
  },
  nl: {
    modelTrouble: 'Sorry, ik kan nu even niet antwoorden. Kunt u dat herhalen?',
    notCaught: 'Sorry, dat verstond ik niet. Kunt u het herhalen?',
    oneMoment: 'Een moment, ik kijk het even na. ',
  },
};

export const ENGLISH_LINES = LINES.en;

/** The lines in `language` (e.g. `es-ES` → Spanish), English when it has none here. */
export function serviceLines(language: string | undefined): ServiceLines {
  return LINES[(language ?? 'en').split('-')[0].toLowerCase()] ?? ENGLISH_LINES;
}

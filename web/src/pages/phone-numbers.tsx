export default function Page() { return <p>phone-numbers</p>; }
